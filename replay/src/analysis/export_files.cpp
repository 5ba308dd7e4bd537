// The edited run written as files (export.h): a snapshot memory_viz opens, a CSV timeline.
#include "reservoir/replay/export.h"

#include <fmt/format.h>

#include "reservoir/replay/output_targets.h"
#include "reservoir/traces/writer.h"

namespace reservoir::replay {

Status checkExportTargets(const std::string& trace, const std::vector<std::pair<std::string, std::string>>& outputs,
                          const std::string& capture_json) {
  std::vector<NamedPath> read_too;
  if (!capture_json.empty()) read_too.emplace_back("the capture JSON the trace was read with", capture_json);
  return checkOutputTargets({{"", trace}}, outputs, read_too);
}

Expected<ExportCounts> writeEditedRun(const PreparedTrace& prepared, const std::vector<ResolvedEdit>& edits,
                                      const WhatIfOptions& options, const std::string& out, const std::string& csv,
                                      const std::atomic<bool>* cancel) {
  const auto cancelled = [cancel] { return cancel && cancel->load(); };
  ExportCounts counts;
  const auto chosen = chooseEditedRun(prepared, options);
  if (!chosen) return chosen.status();
  RunSettings s = chosen->edited();
  s.address_model = options.address_model;
  s.cancel = cancel;
  std::optional<traces::Snapshot> snap;
  if (!out.empty()) {
    auto run = exportRun(prepared, edits, s);
    if (!run) return run.status();
    snap = std::move(*run);
    counts.events = snap->devices[prepared.device_index].events.size();
    counts.segments = snap->segments.size();
  }
  std::string timeline;
  if (!csv.empty() && !cancelled()) {
    RunSettings t = s;
    t.keep_timeline = true;
    const auto run = replayProgram(prepared, edits, t);
    timeline = timelineCsv(prepared, run);
    counts.rows = run.timeline.size();
  }
  if (cancelled()) return Status::error("cancelled: nothing written");
  if (snap) {
    traces::WriteOptions w;
    w.cancel = cancel;
    if (Status st = traces::writeSnapshotFile(*snap, out, w); !st.ok()) return Status::error(out + ": " + st.message());
  }
  if (!csv.empty())
    if (Status st = traces::writeOutputFile(csv, timeline); !st.ok()) return st;
  return counts;
}

}  // namespace reservoir::replay
