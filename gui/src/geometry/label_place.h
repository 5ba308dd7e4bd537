// Where point labels go (the comparison's peak labels): beside their points, inside the plot,
// none over another.
#pragma once

#include <span>
#include <vector>

namespace reservoir::gui {

struct LabelBox {
  double x = 0, y = 0, w = 0, h = 0;  // top-left corner and size
  [[nodiscard]] bool overlaps(const LabelBox& o) const;
  [[nodiscard]] double right() const { return x + w; }
  [[nodiscard]] double bottom() const { return y + h; }
};

// A label of size (w, h) for the point (x, y); `below` prefers the side under the point.
struct LabelRequest {
  double x = 0, y = 0, w = 0, h = 0;
  bool below = false;
};

// Places each label in order, `gap` pixels from its point: its preferred side (above or below),
// right of the point, else left of it, else the other side; moved inside `bounds`. A label that
// would overlap one already placed tries the next place; when every place overlaps, it goes
// under (or over) the labels in its way.
std::vector<LabelBox> placeLabels(std::span<const LabelRequest> labels, const LabelBox& bounds, double gap = 8.0);

}  // namespace reservoir::gui
