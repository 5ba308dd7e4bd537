#include "plot/timeline_frame.h"

#include <algorithm>

namespace reservoir::gui {

std::uint32_t TimelineFrame::eventAtColumn(int column) const {
  if (column < 0 || column >= static_cast<int>(columns.size())) return ColumnRange::kNone;
  const auto& c = columns[static_cast<std::size_t>(column)];
  return representative.empty() || representative[static_cast<std::size_t>(column)] == ColumnRange::kNone
             ? c.last()
             : representative[static_cast<std::size_t>(column)];
}

std::uint32_t bandColour(std::uint32_t allocation, const void* context) {
  if (allocation == kMergedBand) return kMergedBandColour;
  const auto* plot = static_cast<const RecordedPlot*>(context);
  const auto stack = plot->trace->lifetimes.stack(allocation);
  return stack.valid() && stack.value() < plot->stack_colour.size() ? plot->stack_colour[stack.value()]
                                                                    : paletteColour(allocation);
}

Axis fullXAxis(const RecordedPlot& rec, bool time_axis, int width) {
  Axis a{0, static_cast<double>(std::max<std::size_t>(rec.events(), 1)), 0, static_cast<double>(width)};
  const auto& t = rec.trace->series.time_us;
  if (time_axis && !t.empty()) {
    a.d0 = static_cast<double>(t.front());
    a.d1 = static_cast<double>(std::max(t.back(), t.front() + 1));
  }
  return a;
}

std::uint32_t eventAtDomain(const RecordedPlot& rec, bool time_axis, double d) {
  const auto n = rec.events();
  if (n == 0) return 0;
  if (!time_axis) return static_cast<std::uint32_t>(std::clamp(d, 0.0, static_cast<double>(n - 1)));
  const std::size_t after = rec.trace->series.time_us.upperBound(static_cast<std::int64_t>(d));
  return static_cast<std::uint32_t>(after == 0 ? 0 : after - 1);
}

double domainOfEvent(const RecordedPlot& rec, bool time_axis, std::uint32_t e) {
  if (!time_axis || rec.events() == 0) return static_cast<double>(e);
  return static_cast<double>(rec.trace->series.time_us[std::min<std::size_t>(e, rec.events() - 1)]);
}

namespace {

std::int64_t maxOf(const std::vector<ColumnEnvelope>& env) {
  std::int64_t m = 0;
  for (const auto& e : env)
    if (e.valid) m = std::max(m, e.max);
  return m;
}

void rasterizeCurves(TimelineFrame& f) {
  const int w = f.raster.width(), h = f.raster.height();
  auto* px = reinterpret_cast<std::uint32_t*>(f.raster.bits());
  const int stride = static_cast<int>(f.raster.bytesPerLine() / 4);
  const std::pair<const std::vector<ColumnEnvelope>*, CurveKind> curves[] = {{&f.reserved, CurveKind::kReserved},
                                                                             {&f.allocated, CurveKind::kAllocated},
                                                                             {&f.active, CurveKind::kActive},
                                                                             {&f.mapped, CurveKind::kMapped},
                                                                             {&f.variant, CurveKind::kVariant}};
  for (std::size_t i = 0; i < f.overlays.size(); ++i)
    if (!f.overlays[i].empty()) rasterizeCurve(f.overlays[i], f.y, px, w, h, stride, overlayStyle(i));
  for (const auto& [env, kind] : curves)
    if (!env->empty()) rasterizeCurve(*env, f.y, px, w, h, stride, curveStyle(kind));
  f.curves_rastered = true;
}

}  // namespace

CurveStyle curveStyle(CurveKind kind) {
  switch (kind) {
    case CurveKind::kReserved: return {0xff1e1e1eu, 2, 0, 0};
    case CurveKind::kAllocated: return {0xff1964d2u, 1, 0, 0};
    case CurveKind::kActive: return {0xff00966eu, 1, 4, 3};
    case CurveKind::kMapped: return {0xff823cb4u, 1, 2, 2};
    case CurveKind::kVariant: return {0xfff06e00u, 2, 7, 4};
  }
  return {};
}

CurveStyle overlayStyle(std::size_t index) {
  static constexpr std::uint32_t kColours[kMaxOverlays] = {0xff009e9eu, 0xffc0369au, 0xff7a8a00u, 0xff8a5a2au};
  return {kColours[index % kMaxOverlays], 1, 5, 3};
}

TimelineFrame buildTimelineFrame(const TimelineRequest& req, const RecordedPlot& rec, const ModelPlot* model,
                                 const OpCurve* variant, const std::vector<const OpCurve*>& others) {
  TimelineFrame f;
  f.request = req;
  const int w = std::max(req.width, 1), h = std::max(req.height, 1);
  Axis x = req.x;
  x.p0 = 0;
  x.p1 = w;
  f.request.x = x;
  f.columns = req.time_axis ? rec.timeColumns(x, w) : eventColumns(x, rec.events(), w);
  f.reserved = envelope(rec.reserved, f.columns);
  f.live = envelope(rec.live, f.columns);
  if (rec.mapped.size() > 0) f.mapped = envelope(rec.mapped, f.columns);
  std::int64_t before = rec.trace->facts.start_reserved;
  if (model) {
    const auto ev = model->model->opEvents();
    const auto ranges = opRanges(ev, f.columns);
    f.allocated = opEnvelope(model->allocated_lod, ev, ranges);
    f.active = opEnvelope(model->active_lod, ev, ranges);
    if (variant) f.variant = opEnvelope(variant->lod, ev, ranges, before);
    for (std::size_t i = 0; i < others.size() && i < kMaxOverlays; ++i)
      if (others[i]) f.overlays.push_back(opEnvelope(others[i]->lod, ev, ranges, before));
  }
  std::int64_t top = std::max({maxOf(f.reserved), maxOf(f.variant), maxOf(f.live), std::int64_t{1}});
  for (const auto& o : f.overlays) top = std::max(top, maxOf(o));
  if (req.y_max) top = *req.y_max;
  f.y = Axis{0, static_cast<double>(top) * (req.y_max ? 1.0 : 1.08), static_cast<double>(h), 0};
  f.representative = representativeEvents(f.live, f.columns);
  if (req.bands) {
    const auto threshold = static_cast<std::int64_t>(req.min_band_px * f.y.d1 / h);
    f.bands = computeBands(rec.lifetimes(), f.representative, threshold);
    // Opaque, in the plot's background: painting it is a copy, not a blend.
    f.raster = QImage(w, h, QImage::Format_RGB32);
    f.raster.fill(QColor(252, 252, 253));
    rasterizeBands(f.bands, f.y, reinterpret_cast<std::uint32_t*>(f.raster.bits()), w, h,
                   static_cast<int>(f.raster.bytesPerLine() / 4), &bandColour, &rec);
    f.band_colours = dominantColours(f.bands, &bandColour, &rec, TimelineFrame::kBandLegendColours);
  }
  if (req.raster_curves) {
    if (f.raster.isNull()) {
      f.raster = QImage(w, h, QImage::Format_RGB32);
      f.raster.fill(QColor(252, 252, 253));
    }
    rasterizeCurves(f);
  }
  f.annotations = mergeMarks(rec.annotation_events, f.columns);
  f.ooms = mergeMarks(rec.trace->series.ooms, f.columns);
  return f;
}

}  // namespace reservoir::gui
