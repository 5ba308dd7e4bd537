#include "reservoir/replay/summary.h"

#include <fmt/format.h>

#include <future>
#include <system_error>

#include "analysis/running_peak.h"
#include "reservoir/traces/recorded_reserved.h"
#include "reservoir/traces/request_stream.h"
#include "reservoir/traces/window_start.h"

namespace reservoir::replay {

using traces::Action;

FinalState finalState(const traces::Snapshot& snap, std::optional<std::int64_t> device) {
  FinalState f;
  for (const auto& s : snap.segments) {
    if (device && s.device != *device) continue;
    ++f.segments;
    f.reserved += static_cast<std::int64_t>(s.total_size);
    f.allocated += static_cast<std::int64_t>(s.allocated_size);
    f.active += static_cast<std::int64_t>(s.active_size);
    f.requested += static_cast<std::int64_t>(s.requested_size);
    if (s.is_expandable) ++f.expandable_segments;
    for (const auto& b : snap.blocksOf(s)) {
      ++f.blocks;
      ++f.blocks_by_state[std::string(traces::blockStateName(b.state))];
    }
  }
  return f;
}

namespace {

void recordedReservedPeak(const traces::DeviceTrace& trace, DeviceSummary& s) {
  const auto walk = traces::walkRecordedReserved(trace, s.start_reserved);
  s.peak_reserved = PeakPoint{walk.peak, 0, trace.timeOf(0), StackId(0), true};
  if (!walk.peak_event) return;
  // The segment event is part of a malloc: its stack is the request's.
  const std::size_t i = *walk.peak_event;
  std::size_t k = i;
  while (k < trace.events.size() && trace.events[k].action != Action::kAlloc && trace.events[k].action != Action::kOom)
    ++k;
  const auto& at = k < trace.events.size() ? trace.events[k] : trace.events[i];
  s.peak_reserved = PeakPoint{walk.peak, i, trace.timeOf(i), at.stack, true};
}

void modelAllocatedPeak(const traces::Snapshot& snap, std::size_t device_index, const ReplayEnvironment& env,
                        DeviceSummary& s) {
  ConformanceOptions opts;
  opts.env = env;
  opts.env.capture.reset();
  opts.find_missing_fraction = false;  // the peak only; check names a missing fraction
  detail::RunningAllocatedPeak peak(snap.devices[device_index]);
  opts.after_request = [&peak](std::size_t first, std::size_t end, const sim::CachingAllocator& model) {
    peak.request(first, end, model.totals().allocated);
  };
  auto report = runConformance(snap, device_index, opts);
  if (!report) {
    s.peak_allocated_note = "not computed: " + report.message();
    return;
  }
  s.peak_allocated = peak.peak();
  if (report->first_divergence)
    s.peak_allocated_note =
        fmt::format("up to event {} only: the model diverged from the recording there (run {})",
                    report->first_divergence->event_index, wordingOr(env.wording).run(Command::kCheck));
}

}  // namespace

DeviceSummary summarizeDevice(const traces::Snapshot& snap, std::size_t device_index, const ReplayEnvironment& env,
                              const SummaryOptions& options) {
  const traces::DeviceTrace& trace = snap.devices.at(device_index);
  const bool model_it = options.model_allocated_peak && !trace.events.empty();
  // The modelled peak is the longest part: it runs on a second thread while this one does the
  // rest, and is used only where the start state can be rebuilt (as if run after it).
  std::future<DeviceSummary> model;
  if (model_it) {
    try {
      model = std::async(std::launch::async, [&snap, device_index, &env] {
        DeviceSummary m;
        modelAllocatedPeak(snap, device_index, env, m);
        return m;
      });
    } catch (const std::system_error&) {
      // No thread to be had: the model runs on this one, below.
    }
  }
  DeviceSummary s;
  s.modelled = model_it;
  s.device = trace.device;
  s.events = trace.events.size();
  for (const auto& e : trace.events) ++s.actions[static_cast<std::size_t>(e.action)];
  if (!trace.events.empty()) {
    s.first_time_us = trace.timeOf(0);
    s.last_time_us = trace.timeOf(trace.events.size() - 1);
  }
  for (const auto& a : snap.annotations)
    if (a.device == trace.device || a.device < 0) ++s.annotations;
  s.final_state = finalState(snap, trace.device);
  // The start state needs only the allocations made before the window and those never freed,
  // not the whole request stream (the model builds its own on the other thread).
  auto start = traces::rebuildWindowStart(snap, device_index, traces::buildWindowRequests(trace, snap.extras));
  if (start) {
    s.complete = start->complete;
    s.start_reserved = static_cast<std::int64_t>(start->reservedBytes());
  } else {
    s.complete = false;
    s.peak_allocated_note = "start state not rebuilt: " + start.message();
  }
  recordedReservedPeak(trace, s);
  if (model.valid()) {
    DeviceSummary m = model.get();
    if (start) {
      s.peak_allocated = m.peak_allocated;
      s.peak_allocated_note = std::move(m.peak_allocated_note);
    }
  } else if (start && model_it) {
    modelAllocatedPeak(snap, device_index, env, s);
  } else if (start && !trace.events.empty()) {
    s.peak_allocated_note = fmt::format("not computed: it comes from the conformance replay (give {})",
                                        wordingOr(env.wording).give(Input::kPeakAllocated));
  }
  return s;
}

}  // namespace reservoir::replay
