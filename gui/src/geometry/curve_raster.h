// Drawing a merged curve (per-column envelopes) straight into 32-bit pixels: per column, one
// vertical run covering the value entering the column, its extremes and the value leaving
// it. A raster engine strokes the same polyline pixel by pixel through its general path
// code (milliseconds for a busy curve); this writes each pixel once. The vector path
// (paintCurve) stays for SVG export.
#pragma once

#include <cstdint>
#include <span>

#include "geometry/axis.h"
#include "geometry/lod.h"

namespace reservoir::gui {

struct CurveStyle {
  std::uint32_t rgb = 0xff000000u;  // 0xAARRGGBB, written as is (opaque)
  int thickness = 1;                // rows added above the run (like a pen offset upwards)
  int dash_on = 0, dash_off = 0;    // pixels along the path; dash_on == 0: solid
};

// The pixel row of `value` on `y`, clamped to [0, height).
int curveRow(const Axis& y, std::int64_t value, int height);

// Draws `cols` (column c at pixel column c; invalid columns are gaps) into `pixels`
// (width x height, `stride` pixels per row).
void rasterizeCurve(std::span<const ColumnEnvelope> cols, const Axis& y, std::uint32_t* pixels, int width, int height,
                    int stride, const CurveStyle& style);

}  // namespace reservoir::gui
