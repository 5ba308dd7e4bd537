#include "geometry/curve_raster.h"

#include <algorithm>
#include <cmath>

namespace reservoir::gui {

int curveRow(const Axis& y, std::int64_t value, int height) {
  const double p = std::floor(y.toPixel(static_cast<double>(value)));
  return static_cast<int>(std::clamp(p, 0.0, static_cast<double>(std::max(height - 1, 0))));
}

void rasterizeCurve(std::span<const ColumnEnvelope> cols, const Axis& y, std::uint32_t* pixels, int width, int height,
                    int stride, const CurveStyle& style) {
  if (width <= 0 || height <= 0) return;
  const std::size_t n = std::min(cols.size(), static_cast<std::size_t>(width));
  const int period = style.dash_on > 0 ? style.dash_on + std::max(style.dash_off, 0) : 0;
  const int extra = std::max(style.thickness, 1) - 1;
  std::int64_t along = 0;  // path length so far, for the dash pattern
  int prev_row = -1;       // the row the previous column left at (-1: a gap)
  for (std::size_t c = 0; c < n; ++c) {
    const ColumnEnvelope& e = cols[c];
    if (!e.valid) {
      prev_row = -1;
      continue;
    }
    int top = curveRow(y, e.max, height), bottom = curveRow(y, e.min, height);
    if (prev_row >= 0) {
      top = std::min(top, prev_row);
      bottom = std::max(bottom, prev_row);
    }
    top = std::max(top - extra, 0);
    std::uint32_t* px = pixels + static_cast<std::ptrdiff_t>(top) * stride + static_cast<std::ptrdiff_t>(c);
    for (int row = top; row <= bottom; ++row, px += stride, ++along)
      if (period == 0 || along % period < style.dash_on) *px = style.rgb;
    prev_row = curveRow(y, e.last, height);
  }
}

}  // namespace reservoir::gui
