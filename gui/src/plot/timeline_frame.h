// One frame of the memory timeline, computed from immutable plot data for a view (x range,
// event or time axis, size in pixels): per-column envelopes of every curve, the live-block
// bands and their raster. Painting and hit testing then read only this. Independent of
// widgets so that the benchmarks and tests drive it directly.
#pragma once

#include <QImage>

#include <optional>
#include <vector>

#include "app/plot_data.h"
#include "geometry/axis.h"
#include "geometry/bands.h"
#include "geometry/curve_raster.h"
#include "geometry/lod.h"

namespace reservoir::gui {

struct TimelineRequest {
  Axis x;  // domain: events, or microseconds when time_axis; pixels 0..width
  bool time_axis = false;
  int width = 800, height = 400;  // the plot area
  bool bands = true;
  double min_band_px = 2.0;           // thinner blocks are merged
  std::optional<std::int64_t> y_max;  // default: from the curves in view
  // Draw the curves into `raster` (a screen); off for vector output, which strokes them.
  bool raster_curves = true;
};

// The curves of the timeline, in painting order, and how each is drawn.
enum class CurveKind : std::uint8_t { kReserved, kAllocated, kActive, kMapped, kVariant };
CurveStyle curveStyle(CurveKind kind);

struct TimelineFrame {
  TimelineRequest request;
  Axis y;  // bytes -> pixels (0 at the bottom)
  std::vector<ColumnRange> columns;
  std::vector<ColumnEnvelope> reserved, live, mapped;  // recorded
  std::vector<ColumnEnvelope> allocated, active;       // modelled (when available)
  std::vector<ColumnEnvelope> variant;                 // the selected what-if (when any)
  std::vector<std::vector<ColumnEnvelope>> overlays;   // other what-ifs drawn with it (overlayStyle(i))
  std::vector<std::uint32_t> representative;
  static constexpr std::size_t kBandLegendColours = 5;
  BandColumns bands;
  std::vector<std::uint32_t> band_colours;  // the colours covering most of the bands: the legend's swatch
  QImage raster;                            // width x height: the bands, and the curves when curves_rastered
  bool curves_rastered = false;
  std::vector<MergedMark> annotations, ooms;
  [[nodiscard]] std::uint32_t eventAtColumn(int column) const;
};

// At most this many other what-if variants are drawn beside the selected one.
inline constexpr std::size_t kMaxOverlays = 4;
CurveStyle overlayStyle(std::size_t index);

TimelineFrame buildTimelineFrame(const TimelineRequest& request, const RecordedPlot& recorded, const ModelPlot* model,
                                 const OpCurve* variant, const std::vector<const OpCurve*>& others = {});

// The colour of an allocation's band (by its allocation stack; the merged band is grey).
std::uint32_t bandColour(std::uint32_t allocation, const void* recorded_plot);

// The domain the x axis covers for a trace: [0, events) or [first, last] microseconds.
Axis fullXAxis(const RecordedPlot& recorded, bool time_axis, int width);
// The event at domain value `d` (event index or microseconds).
std::uint32_t eventAtDomain(const RecordedPlot& recorded, bool time_axis, double d);
// The domain value of event `e` (its left edge in event mode).
double domainOfEvent(const RecordedPlot& recorded, bool time_axis, std::uint32_t e);

}  // namespace reservoir::gui
