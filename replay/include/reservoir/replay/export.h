// The modelled (possibly edited) run as artefacts people already use: a snapshot that
// PyTorch's memory_viz opens, and CSV timelines.
#pragma once

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "reservoir/replay/whatif.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::replay {

// Replays `prepared` under `edits`/`settings` and builds a snapshot of the run: the device trace
// of every event the model emitted (stacks and times from the recording; inserted cleanups get
// the time of the op they precede), the final segments, the settings used, the annotations.
Expected<traces::Snapshot> exportRun(const PreparedTrace& prepared, const std::vector<ResolvedEdit>& edits,
                                     RunSettings settings);

// "event,time_us,allocated,reserved,active,requested" per op of the run (event = the op's last
// recorded event).
std::string timelineCsv(const PreparedTrace& prepared, const RunResult& run);

// An export's outputs ({label, path}; empty paths are skipped) checked against its one input:
// checkOutputTargets (output_targets.h), the rule of every command that writes. `capture_json`,
// when given, is a capture JSON the trace was read with from elsewhere (a snapshot loaded from
// memory with its capture facts): it is refused as the one beside the trace is.
Status checkExportTargets(const std::string& trace, const std::vector<std::pair<std::string, std::string>>& outputs,
                          const std::string& capture_json = {});

// What writeEditedRun wrote.
struct ExportCounts {
  std::size_t events = 0, segments = 0;  // the snapshot's (device trace events, final segments)
  std::size_t rows = 0;                  // the CSV timeline's
};

// The edited run (`options`' device and address model; `edits` resolved on `prepared`, which
// was prepared in editedRunEnvironment(env, options)) written as a snapshot to `out` and/or as
// a CSV timeline to `csv` (an empty path: not written). Every front end's export.
// Both outputs are made in memory before either is written; `cancel`, once set, stops the work
// at the next stage or frame and leaves no output written (an error saying it was cancelled).
Expected<ExportCounts> writeEditedRun(const PreparedTrace& prepared, const std::vector<ResolvedEdit>& edits,
                                      const WhatIfOptions& options, const std::string& out, const std::string& csv,
                                      const std::atomic<bool>* cancel = nullptr);

}  // namespace reservoir::replay
