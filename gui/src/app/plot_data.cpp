#include "app/plot_data.h"

namespace reservoir::gui {

LifetimeView RecordedPlot::lifetimes() const {
  const auto& l = trace->lifetimes;
  return LifetimeView{l.begin, l.end, l.size, l.event_allocation, trace->series.live, event_size_class};
}

std::shared_ptr<const RecordedPlot> makeRecordedPlot(std::shared_ptr<const replay::LoadStage> trace) {
  auto p = std::make_shared<RecordedPlot>();
  p->trace = std::move(trace);
  const auto& s = p->trace->series;
  p->reserved = MinMaxPyramid(s.reserved);
  p->live = MinMaxPyramid(s.live);
  p->mapped = MinMaxPyramid(s.mapped);
  for (const auto& a : p->trace->annotations) p->annotation_events.push_back(a.event);
  p->stack_colour.resize(p->trace->snapshot().stackCount());
  for (std::size_t k = 0; k < p->stack_colour.size(); ++k) p->stack_colour[k] = paletteColour(k);
  p->event_size_class = eventSizeClasses(p->trace->lifetimes.event_allocation, p->trace->lifetimes.size);
  return p;
}

std::shared_ptr<const ModelPlot> makeModelPlot(std::shared_ptr<const replay::ModelStage> model) {
  auto p = std::make_shared<ModelPlot>();
  p->model = std::move(model);
  const auto& m = *p->model;
  for (std::size_t j = 0; j < m.allocated.size() && j < m.op_event.size(); ++j)
    if (m.allocated[j] > p->peak_allocated) {
      p->peak_allocated = m.allocated[j];
      p->peak_allocated_event = m.op_event[j];
    }
  p->allocated_lod = MinMaxPyramid(m.allocated);
  p->active_lod = MinMaxPyramid(m.active);
  return p;
}

std::shared_ptr<const OpCurve> makeOpCurve(const std::vector<replay::TimelinePoint>& timeline) {
  auto c = std::make_shared<OpCurve>();
  c->values.reserve(timeline.size());
  for (const auto& t : timeline) c->values.push_back(t.reserved);
  c->lod = MinMaxPyramid(c->values);
  return c;
}

}  // namespace reservoir::gui
