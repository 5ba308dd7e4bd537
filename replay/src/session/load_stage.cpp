// Stage 1 of a TraceSession: the recording's own per-event series and allocation lifetimes.
#include <fmt/format.h>

#include <algorithm>

#include "reservoir/replay/session.h"
#include "reservoir/traces/reader.h"
#include "reservoir/traces/recorded_reserved.h"
#include "reservoir/traces/request_stream.h"
#include "reservoir/traces/window_start.h"

namespace reservoir::replay {

AllocationLifetimes::AllocationLifetimes(std::shared_ptr<const traces::RequestStream> stream, std::size_t events)
    : stream_(std::move(stream)), events_(events) {}

namespace {

using traces::Action;

void fillSeries(const traces::DeviceTrace& trace, const AllocationLifetimes& l, std::int64_t start_reserved,
                std::int64_t start_live, EventSeries& s) {
  const std::size_t n = trace.events.size();
  s.live.clear();
  s.live.reserve(n);
  s.time_us = EventTimes(trace);
  bool any_map = false;
  std::int64_t reserved = start_reserved, live = start_live, mapped = 0;
  s.peak_reserved = reserved;
  StepSeries mapped_series;
  for (std::size_t e = 0; e < n; ++e) {
    const auto& ev = trace.events[e];
    const std::int64_t change = traces::reservedChange(ev);
    reserved += change;
    if (ev.action == Action::kSegmentMap || ev.action == Action::kSegmentUnmap) {
      mapped += change;
      any_map = true;
    }
    if (ev.action == Action::kOom) s.ooms.push_back(static_cast<std::uint32_t>(e));
    const auto a = l.eventAllocation(e);
    if (a != AllocationLifetimes::kNone) {
      if (ev.action == Action::kAlloc && l.begin(a) == e) live += static_cast<std::int64_t>(l.size(a));
      if (ev.action == Action::kFreeCompleted && l.end(a) == e) live -= static_cast<std::int64_t>(l.size(a));
    }
    const auto ev32 = static_cast<std::uint32_t>(e);
    s.reserved.push(ev32, reserved);
    s.live.push_back(live);
    mapped_series.push(ev32, mapped);
    if (e == 0 || reserved > s.peak_reserved) {
      s.peak_reserved = reserved;
      s.peak_reserved_event = static_cast<std::uint32_t>(e);
    }
    if (live > s.peak_live) {
      s.peak_live = live;
      s.peak_live_event = static_cast<std::uint32_t>(e);
    }
  }
  if (any_map) s.mapped = std::move(mapped_series);
}

std::string anomalyLines(const traces::AnomalyCounters& c) {
  std::string out;
  for (std::size_t i = 0; i < traces::AnomalyCounters::kCount; ++i) {
    const auto a = static_cast<traces::Anomaly>(i);
    if (c.count(a) == 0) continue;
    out += fmt::format("{} x {} ({})\n", c.count(a), traces::anomalyInfo(a).name, traces::anomalyInfo(a).description);
  }
  return out;
}

TraceFacts makeFacts(const LoadStage& t, bool complete, std::int64_t start_reserved) {
  TraceFacts f;
  const auto& trace = t.deviceTrace();
  f.path = t.path();
  f.file_bytes = t.snapshot().file_bytes;
  f.device = trace.device;
  f.device_index = t.device_index;
  f.devices = t.snapshot().devices.size();
  f.events = trace.events.size();
  f.complete = complete;
  f.start_reserved = start_reserved;
  if (!t.series.time_us.empty()) {
    f.first_time_us = trace.timeOf(0);
    f.last_time_us = t.series.time_us.back();
  }
  f.allocations = t.lifetimes.count();
  for (const auto& seg : t.snapshot().segments) {
    if (seg.device != trace.device) continue;
    ++f.segments_final;
    f.expandable = f.expandable || seg.is_expandable;
  }
  f.frames = t.snapshot().frames.size();
  f.stacks = t.snapshot().stackCount();
  f.settings = t.snapshot().settings.alloc_conf;
  f.expandable = f.expandable || t.snapshot().settings.expandable_segments;
  f.anomalies = anomalyLines(t.snapshot().anomalies);
  return f;
}

}  // namespace

namespace {

// `first_at_or_after(t)`: the first event whose time is >= t (size when none).
template <typename FirstAtOrAfter>
std::vector<AnnotationMark> markAt(const traces::Snapshot& snap, const traces::DeviceTrace& trace, std::size_t size,
                                   FirstAtOrAfter first_at_or_after) {
  std::vector<AnnotationMark> out;
  if (size == 0) return out;
  for (const auto& a : snap.annotations) {
    if (a.device >= 0 && a.device != trace.device) continue;
    const auto ev = static_cast<std::uint32_t>(std::min(first_at_or_after(a.time_us), size - 1));
    out.push_back(AnnotationMark{ev, a.time_us, a.stage != "END", a.name});
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.time_us < y.time_us; });
  return out;
}

}  // namespace

std::vector<AnnotationMark> markAnnotations(const traces::Snapshot& snap, const traces::DeviceTrace& trace,
                                            const EventTimes& time_us) {
  return markAt(snap, trace, time_us.size(), [&](std::int64_t t) { return time_us.lowerBound(t); });
}

Expected<std::unique_ptr<LoadStage>> buildLoadStage(Trace loaded, std::optional<std::size_t> device) {
  if (!loaded.snapshot || loaded.snapshot->devices.empty())
    return Status::error(loaded.path + ": the snapshot has no device traces");
  auto t = std::make_unique<LoadStage>();
  t->trace = std::move(loaded);
  t->device_index = device.value_or(t->snapshot().busiestDevice());
  if (t->device_index >= t->snapshot().devices.size())
    return Status::error(fmt::format("{}: no device index {}", t->path(), t->device_index));
  const auto& trace = t->deviceTrace();
  std::int64_t start_reserved = 0, start_live = 0;
  bool complete = true;
  {
    auto rs = std::make_shared<const traces::RequestStream>(traces::buildRequestStream(trace, t->snapshot().extras));
    t->lifetimes = AllocationLifetimes(rs, trace.events.size());
    auto start = traces::rebuildWindowStart(t->snapshot(), t->device_index, *rs);
    if (start) {
      complete = start->complete;
      start_reserved = static_cast<std::int64_t>(start->reservedBytes());
    } else {
      complete = false;
    }
  }
  for (std::size_t a = 0; a < t->lifetimes.count(); ++a)
    if (t->lifetimes.beforeWindow(a)) start_live += static_cast<std::int64_t>(t->lifetimes.size(a));
  fillSeries(trace, t->lifetimes, start_reserved, start_live, t->series);
  t->annotations = markAnnotations(t->snapshot(), trace, t->series.time_us);
  t->facts = makeFacts(*t, complete, start_reserved);
  return t;
}

Expected<std::unique_ptr<LoadStage>> loadTraceFile(const std::string& path, std::optional<std::size_t> device,
                                                   const std::atomic<bool>* cancel,
                                                   std::function<void(std::uint64_t, std::uint64_t)> progress) {
  TraceReadOptions opts;
  opts.cancel = cancel;
  opts.progress = std::move(progress);
  auto trace = readTrace(path, opts);
  if (!trace) return trace.status();
  return buildLoadStage(std::move(*trace), device);
}

}  // namespace reservoir::replay
