#include "geometry/label_place.h"

#include <algorithm>

namespace reservoir::gui {

bool LabelBox::overlaps(const LabelBox& o) const {
  return x < o.right() && o.x < right() && y < o.bottom() && o.y < bottom();
}

namespace {

LabelBox inside(LabelBox b, const LabelBox& bounds) {
  b.x = std::max(bounds.x, std::min(b.x, bounds.right() - b.w));
  b.y = std::max(bounds.y, std::min(b.y, bounds.bottom() - b.h));
  return b;
}

bool clear(const LabelBox& b, std::span<const LabelBox> placed) {
  return std::none_of(placed.begin(), placed.end(), [&](const LabelBox& o) { return b.overlaps(o); });
}

// The four places beside the point, the preferred first.
std::vector<LabelBox> candidates(const LabelRequest& r, const LabelBox& bounds, double gap) {
  const double right = r.x + gap, left = r.x - gap - r.w;
  const double above = r.y - gap - r.h, below = r.y + gap;
  const double first = r.below ? below : above, second = r.below ? above : below;
  // Left first when the label would not fit right of the point.
  const bool right_fits = right + r.w <= bounds.right();
  std::vector<LabelBox> out;
  for (double y : {first, second})
    for (double x : {right_fits ? right : left, right_fits ? left : right})
      out.push_back(inside({x, y, r.w, r.h}, bounds));
  return out;
}

// Past every placed label it overlaps, downwards (or upwards when that leaves the bounds).
LabelBox stacked(LabelBox b, std::span<const LabelBox> placed, const LabelBox& bounds) {
  LabelBox down = b, up = b;
  for (int round = 0; round < static_cast<int>(placed.size()) + 1; ++round)
    for (const LabelBox& o : placed) {
      if (down.overlaps(o)) down.y = o.bottom() + 1;
      if (up.overlaps(o)) up.y = o.y - up.h - 1;
    }
  if (down.bottom() <= bounds.bottom()) return down;
  if (up.y >= bounds.y) return up;
  return down;  // no room either way: below, even outside
}

}  // namespace

std::vector<LabelBox> placeLabels(std::span<const LabelRequest> labels, const LabelBox& bounds, double gap) {
  std::vector<LabelBox> placed;
  for (const LabelRequest& r : labels) {
    const auto places = candidates(r, bounds, gap);
    const auto it = std::find_if(places.begin(), places.end(), [&](const LabelBox& b) { return clear(b, placed); });
    placed.push_back(it != places.end() ? *it : stacked(places.front(), placed, bounds));
  }
  return placed;
}

}  // namespace reservoir::gui
