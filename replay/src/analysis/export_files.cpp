// The edited run written as files (export.h): a snapshot memory_viz opens, a CSV timeline.
#include "reservoir/replay/export.h"

#include <fmt/format.h>

#include "reservoir/replay/output_targets.h"
#include "reservoir/traces/writer.h"

namespace reservoir::replay {

Status checkExportTargets(const std::string& trace, const std::vector<std::pair<std::string, std::string>>& outputs) {
  return checkOutputTargets({{"", trace}}, outputs);
}

Expected<ExportCounts> writeEditedRun(const PreparedTrace& prepared, const std::vector<ResolvedEdit>& edits,
                                      const WhatIfOptions& options, const std::string& out, const std::string& csv) {
  ExportCounts counts;
  const auto chosen = chooseEditedRun(prepared, options);
  if (!chosen) return chosen.status();
  RunSettings s = chosen->edited();
  s.address_model = options.address_model;
  if (!out.empty()) {
    auto snap = exportRun(prepared, edits, s);
    if (!snap) return snap.status();
    if (Status st = traces::writeSnapshotFile(*snap, out); !st.ok()) return Status::error(out + ": " + st.message());
    counts.events = snap->devices[prepared.device_index].events.size();
    counts.segments = snap->segments.size();
  }
  if (!csv.empty()) {
    RunSettings t = s;
    t.keep_timeline = true;
    const auto run = replayProgram(prepared, edits, t);
    if (Status st = traces::writeOutputFile(csv, timelineCsv(prepared, run)); !st.ok()) return st;
    counts.rows = run.timeline.size();
  }
  return counts;
}

}  // namespace reservoir::replay
