#include "geometry/segment_layout.h"

#include <algorithm>
#include <cmath>

namespace reservoir::gui {

std::vector<RibbonPiece> SegmentLayout::pieces(double p0, double p1) const {
  std::vector<RibbonPiece> out;
  if (width <= 0) return out;
  while (p1 - p0 > 1e-9) {
    const int row = static_cast<int>(std::floor(p0 / width + 1e-12));
    const double row_end = (row + 1) * width;
    const double end = std::min(p1, row_end);
    out.push_back(RibbonPiece{row, p0 - row * width, end - row * width});
    p0 = end;
  }
  return out;
}

double SegmentLayout::position(std::size_t s, std::uint64_t offset) const {
  return start[s] + static_cast<double>(offset) / bytes_per_px;
}

bool SegmentLayout::hit(int row, double x, Hit& out) const {
  const double p = row * width + x;
  const auto it = std::upper_bound(start.begin(), start.end(), p);
  if (it == start.begin()) return false;
  const auto s = static_cast<std::size_t>(it - start.begin() - 1);
  const double rel = (p - start[s]) * bytes_per_px;
  if (rel < 0 || rel >= static_cast<double>(size[s])) return false;
  out.segment = s;
  out.offset = static_cast<std::uint64_t>(rel);
  return true;
}

SegmentLayout layoutSegments(std::span<const std::uint64_t> sizes, double width, int max_rows, double scale_bytes,
                             double gap) {
  SegmentLayout l;
  l.width = std::max(width, 1.0);
  l.gap = gap;
  l.size.assign(sizes.begin(), sizes.end());
  double total = 0;
  for (auto s : sizes) total += static_cast<double>(s);
  const double bytes = std::max({scale_bytes, total, 1.0});
  // Pixels available for bytes once the gaps are paid for (keep at least half the ribbon).
  const double ribbon = l.width * std::max(max_rows, 1);
  const double usable = std::max(ribbon - gap * static_cast<double>(sizes.size()), ribbon * 0.5);
  l.bytes_per_px = bytes / usable;
  double p = 0;
  for (auto s : sizes) {
    l.start.push_back(p);
    p += static_cast<double>(s) / l.bytes_per_px + gap;
  }
  l.rows = static_cast<int>(std::ceil(p / l.width));
  return l;
}

int blockAt(std::span<const std::uint64_t> offsets, std::span<const std::uint64_t> sizes, std::uint64_t offset) {
  const auto it = std::upper_bound(offsets.begin(), offsets.end(), offset);
  if (it == offsets.begin()) return -1;
  const auto i = static_cast<std::size_t>(it - offsets.begin() - 1);
  return offset < offsets[i] + sizes[i] ? static_cast<int>(i) : -1;
}

}  // namespace reservoir::gui
