// The edited run written as files (export.h): a snapshot memory_viz opens, a CSV timeline.
#include "reservoir/replay/export.h"

#include <fmt/format.h>

#include <filesystem>

#include "reservoir/replay/capture_facts.h"
#include "reservoir/traces/writer.h"

namespace reservoir::replay {
namespace {

// Whether `x` and `y` name one regular file (or one path not made yet).
bool sameFile(const std::string& x, const std::string& y) {
  if (x.empty() || y.empty()) return false;
  std::error_code ec;
  const auto cx = std::filesystem::weakly_canonical(x, ec);
  if (ec) return x == y;
  const auto cy = std::filesystem::weakly_canonical(y, ec);
  if (ec || cx != cy) return false;
  return !std::filesystem::exists(cx, ec) || std::filesystem::is_regular_file(cx, ec);
}

}  // namespace

Status checkExportTargets(const std::string& trace, const std::vector<std::pair<std::string, std::string>>& outputs) {
  const std::string json = captureJsonPath(trace);
  for (const auto& [label, path] : outputs) {
    if (sameFile(path, trace))
      return Status::usage(fmt::format("{} {} is the trace being read: write to another file", label, path));
    if (sameFile(path, json))
      return Status::usage(
          fmt::format("{} {} is the trace's capture JSON (read beside it): write to another file", label, path));
  }
  for (std::size_t i = 0; i < outputs.size(); ++i)
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      if (sameFile(outputs[i].second, outputs[j].second))
        return Status::usage(fmt::format("{} and {} name the same file ({}): give two files", outputs[i].first,
                                         outputs[j].first, outputs[i].second));
  return {};
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
