#include "app/plot_data.h"

#include <algorithm>

#include "geometry/band_colouring.h"

namespace reservoir::gui {

LifetimeView RecordedPlot::lifetimes() const {
  const auto& l = trace->lifetimes;
  return LifetimeView{l.allocations(),     l.eventAllocations(), static_cast<std::uint32_t>(l.events()),
                      &trace->series.live, event_size_class,     stack_first};
}

std::vector<ColumnRange> RecordedPlot::timeColumns(const Axis& x, int width) const {
  const auto& t = trace->series.time_us;
  return gui::timeColumns(
      x, [&t](std::int64_t v) { return static_cast<std::uint32_t>(t.lowerBound(v)); }, width);
}

std::vector<std::uint32_t> stackColours(const RecordedPlot& p) {
  const auto& l = p.trace->lifetimes;
  std::vector<std::uint32_t> stack_of(l.count(), kNoAllocation);
  for (std::size_t a = 0; a < l.count(); ++a)
    if (l.stack(a).valid()) stack_of[a] = static_cast<std::uint32_t>(l.stack(a).value());
  const auto rank = colourRanks(stack_of, p.trace->snapshot().stackCount());
  const auto lt = p.lifetimes();
  const auto peak = static_cast<std::uint64_t>(std::max<std::int64_t>(p.trace->series.peak_live, 0));
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  for (const std::uint64_t min_size : {std::uint64_t{0}, peak / 1000, peak / 100}) {
    const auto more = neighbourKeys(lt, stack_of, min_size);
    pairs.insert(pairs.end(), more.begin(), more.end());
  }
  // The stacks' summed small blocks meet other bands than the blocks do: take the pairs of the
  // bands as drawn, over 4096 events across the trace, at thresholds 1.5x apart from 1/1000 of
  // the peak to 1/50 (2 px bands on plots 100 to 2000 px tall).
  if (!lt.stack_first.empty() && p.events() > 0) {
    std::vector<std::uint32_t> rep(std::min<std::size_t>(4096, p.events()));
    for (std::size_t i = 0; i < rep.size(); ++i) rep[i] = static_cast<std::uint32_t>(i * p.events() / rep.size());
    for (double t = static_cast<double>(peak) / 1000; t <= static_cast<double>(peak) / 50; t *= 1.5) {
      const auto threshold = static_cast<std::uint64_t>(t);
      if (threshold == 0) continue;
      const auto more = bandNeighbourKeys(lt, rep, static_cast<std::int64_t>(threshold), stack_of);
      pairs.insert(pairs.end(), more.begin(), more.end());
    }
  }
  const auto index = colourKeys(rank, pairs, kDistinctBandColours);
  std::vector<std::uint32_t> out(index.size());
  for (std::size_t k = 0; k < index.size(); ++k) out[k] = paletteColour(index[k]);
  return out;
}

namespace {

// A pyramid over a step series' changes (it costs per change, not per event or op).
MinMaxPyramid stepsPyramid(const replay::StepSeries& x) {
  return MinMaxPyramid(x.changeEvents(), x.changeValues(), x.size());
}

}  // namespace

std::shared_ptr<const RecordedPlot> makeRecordedPlot(std::shared_ptr<const replay::LoadStage> trace) {
  auto p = std::make_shared<RecordedPlot>();
  p->trace = std::move(trace);
  const auto& s = p->trace->series;
  p->reserved = stepsPyramid(s.reserved);
  p->live = MinMaxPyramid(s.live);
  p->mapped = stepsPyramid(s.mapped);
  for (const auto& a : p->trace->annotations) p->annotation_events.push_back(a.event);
  p->event_size_class = eventSizeClasses(p->lifetimes());
  p->stack_first = firstAllocationOfStacks(p->trace->lifetimes.allocations(), p->trace->snapshot().stackCount());
  p->stack_colour = stackColours(*p);
  return p;
}

std::shared_ptr<const ModelPlot> makeModelPlot(std::shared_ptr<const replay::ModelStage> model) {
  auto p = std::make_shared<ModelPlot>();
  p->model = std::move(model);
  const auto& m = *p->model;
  const auto op_event = m.opEvents();
  for (std::size_t j = 0; j < m.allocated.size() && j < op_event.size(); ++j)
    if (m.allocated[j] > p->peak_allocated) {
      p->peak_allocated = m.allocated[j];
      p->peak_allocated_event = op_event[j];
    }
  p->allocated_lod = MinMaxPyramid(m.allocated);
  p->active_lod = MinMaxPyramid(m.active);
  p->reserved_origin = replay::peakOrigin(m, replay::PeakQuantity::kReserved);
  return p;
}

std::shared_ptr<const OpCurve> makeOpCurve(replay::StepSeries reserved) {
  auto c = std::make_shared<OpCurve>();
  c->reserved = std::move(reserved);
  c->lod = stepsPyramid(c->reserved);  // over its changes, as the recorded reserved curve's
  return c;
}

}  // namespace reservoir::gui
