// The verdict on a trace's recording, with its peak resets: the one rule of check and replay.
#include "reservoir/replay/conformance.h"
#include "reservoir/replay/whatif.h"

namespace reservoir::replay {

Expected<ConformanceReport> checkRecording(const traces::Snapshot& snapshot, std::size_t device_index,
                                           ConformanceOptions options, const PeakResets& resets) {
  options.reset_peaks_at = resets.boundaries;
  auto report = runConformance(snapshot, device_index, options);
  if (!report) return report.status();
  if (!resets.note.empty()) report->notes.push_back(resets.note);
  return report;
}

Expected<ConformanceReport> recordingVerdict(const PreparedTrace& prepared, const ReplayEnvironment& env) {
  const traces::Snapshot& snapshot = *prepared.snapshot;
  auto resets = choosePeakResets(snapshot, prepared.device_index, env.capture.get(), {});
  if (!resets) return resets.status();
  // prepareTrace replays without resets: exact so, with none to apply, it is check's verdict.
  if (prepared.conformance.exact() && resets->boundaries.empty()) return prepared.conformance;
  ConformanceOptions options;
  options.env = env;
  return checkRecording(snapshot, prepared.device_index, std::move(options), *resets);
}

}  // namespace reservoir::replay
