// What-if runs on a trace the session already prepared: runWhatIf's report without running
// the conformance replay again (see whatif_run.cpp, which this mirrors step by step).
#include <fmt/format.h>

#include "reservoir/replay/session.h"

namespace reservoir::replay {
namespace {

std::vector<ResolvedEdit> observations(const std::vector<ResolvedEdit>& edits) {
  std::vector<ResolvedEdit> out;
  for (const auto& e : edits)
    if (e.edit.kind == Edit::Kind::kProbe || e.edit.kind == Edit::Kind::kDemand || e.edit.kind == Edit::Kind::kResetPeaks)
      out.push_back(e);
  return out;
}

void setCapacity(const PreparedTrace& p, const WhatIfOptions& o, WhatIfReport& rep, std::optional<sim::ByteCount>& usable) {
  if (p.derived_capacity) {
    usable = *p.derived_capacity > o.overhead ? *p.derived_capacity - o.overhead : 0;
    rep.capacity = p.derived_capacity;
    rep.capacity_source = "the recorded oom events (device_free + reserved)";
  } else if (o.overhead) {
    usable = p.total_memory > o.overhead ? p.total_memory - o.overhead : 0;
    rep.capacity = p.total_memory;
    rep.capacity_source = "the device's total memory minus --overhead";
  } else {
    rep.capacity_source = "unlimited (no oom recorded; give --capacity to predict out-of-memory)";
  }
}

}  // namespace

Expected<WhatIfReport> runWhatIfPrepared(const LoadedTrace& loaded, const PreparedTrace& p, const WhatIfOptions& options) {
  if (options.capacity) return runWhatIf(loaded.snapshot, loaded.device_index, loaded.environment(), options);
  auto edits = resolveEdits(p, options.edits);
  if (!edits) return edits.status();
  WhatIfReport rep;
  rep.device_index = p.device_index;
  rep.conformance = p.conformance;
  rep.recorded_peak_reserved = p.recorded_peak_reserved;
  std::optional<sim::ByteCount> usable;
  setCapacity(p, options, rep, usable);

  RunSettings base;
  base.config = p.recorded_config;
  base.fraction = p.fraction;
  base.usable = usable;
  base.address_model = options.address_model;
  base.analyze_peak = options.analyze_peak;
  base.keep_timeline = options.keep_timeline;
  base.compare_with_recording = true;
  rep.settings_baseline = base.config.last_settings;
  rep.baseline = replayProgram(p, observations(*edits), base);

  RunSettings what = base;
  what.compare_with_recording = false;
  if (options.settings) {
    auto cfg = sim::parseAllocConf(*options.settings);
    if (!cfg) return Status::error("--set: " + cfg.message());
    what.config = *cfg;
  }
  if (options.fraction) what.fraction = *options.fraction;
  rep.settings_whatif = what.config.last_settings;
  rep.whatif = replayProgram(p, *edits, what);

  rep.baseline_matches_recording = rep.baseline.peak_reserved.bytes == p.recorded_peak_reserved &&
                                   !rep.baseline.decision_change && !p.conformance.first_divergence;
  if (p.conformance.first_divergence)
    rep.notes.push_back(fmt::format("the model is not exact on this trace from event {} on (run 'reservoir check')",
                                    p.conformance.first_divergence->event_index));
  if (rep.baseline.decision_change)
    rep.notes.push_back(fmt::format("the modelled baseline departs from the recording at event {} (addresses, "
                                    "capacity or completion models)",
                                    *rep.baseline.decision_change));
  return rep;
}

}  // namespace reservoir::replay
