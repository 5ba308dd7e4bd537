// Preparing a trace for what-if replays, and the baseline-versus-edited comparison.
#include <fmt/format.h>

#include <algorithm>

#include "reservoir/replay/whatif.h"
#include "reservoir/traces/recorded_reserved.h"

namespace reservoir::replay {

using traces::Action;

Expected<PreparedTrace> prepareTrace(std::shared_ptr<const traces::Snapshot> shared, std::size_t device_index,
                                     const ReplayEnvironment& env, const std::atomic<bool>* cancel,
                                     std::shared_ptr<const traces::RequestStream> given) {
  if (!shared) return Status::error("no snapshot");
  const traces::Snapshot& snapshot = *shared;
  PreparedTrace p;
  p.snapshot = std::move(shared);
  p.device_index = device_index;
  auto cfg = replayConfig(snapshot, env);
  if (!cfg) return cfg.status();
  p.recorded_config = *cfg;
  ConformanceOptions opts;
  opts.env = env;
  opts.program = &p.program;
  traces::RequestStream built;
  opts.request_stream = &built;  // built once, by the conformance replay (unless given)
  opts.requests = given.get();
  opts.find_peak_resets = false;      // a what-if uses the events, not the capture's peaks
  opts.find_missing_fraction = false;  // nor a search for a fraction (check and replay do it)
  opts.cancel = cancel;
  auto report = runConformance(snapshot, device_index, opts);
  if (!report) return report.status();
  if (cancel && cancel->load()) return Status::error("cancelled");
  p.conformance = std::move(*report);
  if (p.program.streams_refused > 0)
    return Status::error(fmt::format(
        "too many streams to model: device {} uses more than {} CUDA streams (a program uses a few); the what-if "
        "model names each request's stream in 16 bits",
        p.conformance.device, kMaxStreamEntries - 1));
  // The ops carry their allocations and sizes: of the stream only the stacks are kept.
  p.allocation_stacks = given ? AllocationStacks::sharedWith(std::move(given)) : AllocationStacks::copiedFrom(built);
  built = {};
  p.total_memory = p.conformance.total_memory;
  p.fraction = p.conformance.fraction;
  std::int64_t seeded = 0;
  for (const auto& s : p.program.seed) seeded += static_cast<std::int64_t>(s.reservedBytes());
  const auto walk = traces::walkRecordedReserved(snapshot.devices[device_index], seeded);
  // An oom entry without 'device_free' records no free bytes: deriving a capacity from it would
  // be a guess presented as a recording.
  p.oom_without_device_free = snapshot.anomalies.count(traces::Anomaly::oom_without_device_free) > 0;
  if (!p.oom_without_device_free) p.derived_capacity = walk.capacity_from_ooms;
  p.recorded_peak_reserved = walk.peak;
  if (p.derived_capacity && static_cast<std::int64_t>(*p.derived_capacity) < walk.peak) {
    p.contradicted_capacity = p.derived_capacity;
    p.derived_capacity.reset();
  }
  std::optional<PreparedTrace::SegmentEvent> previous_malloc;
  for (const auto& e : snapshot.devices[device_index].events) {
    if (e.action == Action::kSegmentAlloc) {
      p.recorded_segments_by_size[e.size].push_back(e.addr);
      p.recorded_malloc_follows_previous.push_back(previous_malloc &&
                                                   e.addr == previous_malloc->addr + previous_malloc->size);
      previous_malloc = PreparedTrace::SegmentEvent{true, e.size, e.addr};
    }
    if (e.action == Action::kSegmentAlloc || e.action == Action::kSegmentFree)
      p.recorded_segment_events.push_back({e.action == Action::kSegmentAlloc, e.size, e.addr});
  }
  auto& done = p.completes_at_by_tag;
  for (const Op& op : p.program.ops)
    if (op.kind == OpKind::kFree && op.deferred && op.alloc.valid()) done.emplace_back(op.alloc.value() + 1u, completesAt(op));
  for (const auto& [id, at] : p.program.seed_completes_at) done.emplace_back(id.value() + 1u, at);
  // Per tag the last one given counts (a seed's over an op's), as assignments in this order would.
  std::stable_sort(done.begin(), done.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::size_t kept = 0;
  for (std::size_t i = 0; i < done.size(); ++i) {
    if (i + 1 < done.size() && done[i + 1].first == done[i].first) continue;
    done[kept++] = done[i];
  }
  done.resize(kept);
  done.shrink_to_fit();
  assignHandleSlots(p.program, p.allocation_stacks.size());
  return p;
}

std::uint32_t PreparedTrace::completionOf(std::uint64_t tag) const {
  const auto it = std::lower_bound(completes_at_by_tag.begin(), completes_at_by_tag.end(), tag,
                                   [](const auto& entry, std::uint64_t t) { return entry.first < t; });
  return it != completes_at_by_tag.end() && it->first == tag ? it->second : kNoOp;
}

namespace {

// A release whose selector matches no allocation's stack would silently free nothing.
Status selectorMatchesSomething(const PreparedTrace& prepared, const FrameSpec& selector) {
  StackMatcher matcher(*prepared.snapshot, selector);
  for (std::size_t a = 0; a < prepared.allocation_stacks.size(); ++a)
    if (matcher.matches(prepared.allocation_stacks[a])) return {};
  std::string near;
  for (const auto& n : closestFrameNames(*prepared.snapshot, selector.text, 6)) near += (near.empty() ? "" : ", ") + n;
  return Status::usage(
      fmt::format("selector '{}' matches no allocation's stack, so nothing would be released; "
                  "closest frames: {}",
                  selector.text, near.empty() ? "none recorded" : near));
}

}  // namespace

Expected<std::vector<ResolvedEdit>> resolveEdits(const PreparedTrace& prepared, const std::vector<Edit>& edits) {
  std::vector<ResolvedEdit> out;
  for (const Edit& e : edits) {
    auto gaps = resolvePoint(e.point, *prepared.snapshot, prepared.device_index);
    if (!gaps) return gaps.status().prefixed(e.text + ": ");
    if (e.kind == Edit::Kind::kRelease && e.selector) {
      if (Status st = selectorMatchesSomething(prepared, *e.selector); !st.ok()) return st.prefixed(e.text + ": ");
    }
    out.push_back(ResolvedEdit{e, std::move(*gaps)});
  }
  return out;
}

Expected<WhatIfReport> runWhatIf(std::shared_ptr<const traces::Snapshot> snapshot, std::size_t device_index,
                                 const ReplayEnvironment& env, const WhatIfOptions& options) {
  auto prepared = prepareTrace(std::move(snapshot), device_index, editedRunEnvironment(env, options));
  if (!prepared) return prepared.status();
  return runWhatIfOn(*prepared, options);
}

Expected<WhatIfReport> runWhatIfOn(const PreparedTrace& p, const WhatIfOptions& options) {
  auto edits = resolveEdits(p, options.edits);
  if (!edits) return edits.status();

  WhatIfReport rep;
  rep.device_index = p.device_index;
  rep.edits = options.edits;
  rep.conformance = p.conformance;
  rep.recorded_peak_reserved = p.recorded_peak_reserved;
  auto chosen = chooseEditedRun(p, options);
  if (!chosen) return chosen.status();
  rep.edited_run = std::move(*chosen);
  rep.capacity = rep.edited_run.capacity;
  rep.capacity_source = rep.edited_run.capacity_source;

  RunSettings base = rep.edited_run.baseline();
  base.address_model = options.address_model;
  base.analyze_peak = options.analyze_peak;
  base.keep_timeline = options.keep_timeline;
  base.compare_with_recording = true;
  base.observe_edits_only = true;  // the figures at the cleanups' and releases' points, nothing freed
  rep.settings_baseline = base.config.last_settings;
  rep.baseline = replayProgram(p, *edits, base);

  RunSettings what = rep.edited_run.edited();
  what.address_model = options.address_model;
  what.analyze_peak = options.analyze_peak;
  what.keep_timeline = options.keep_timeline;
  what.keep_curves = options.keep_curves;
  rep.settings_whatif = what.config.last_settings;
  rep.whatif = replayProgram(p, *edits, what);

  rep.notes = settingsNotes(p.recorded_config);
  rep.notes.insert(rep.notes.end(), rep.edited_run.notes.begin(), rep.edited_run.notes.end());
  rep.baseline_matches_recording = rep.baseline.peak_reserved.bytes == p.recorded_peak_reserved &&
                                   !rep.baseline.decision_change && !p.conformance.first_divergence;
  if (p.conformance.first_divergence)
    rep.notes.push_back(fmt::format("the model is not exact on this trace from event {} on (run {})",
                                    p.conformance.first_divergence->event_index,
                                    wordingOr(options.wording).run(Command::kCheck)));
  if (rep.baseline.decision_change)
    rep.notes.push_back(
        fmt::format("the modelled baseline departs from the recording at event {} (addresses, "
                    "capacity or completion models)",
                    *rep.baseline.decision_change));
  return rep;
}

}  // namespace reservoir::replay
