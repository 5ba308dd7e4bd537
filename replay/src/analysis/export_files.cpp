// The edited run written as files (export.h): a snapshot memory_viz opens, a CSV timeline.
#include "reservoir/replay/export.h"

#include <fmt/format.h>

#include <filesystem>
#include <optional>

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

Status checkExportTargets(const std::string& trace, const std::vector<std::pair<std::string, std::string>>& outputs,
                          const std::string& capture_json) {
  const std::string json = captureJsonPath(trace);
  for (const auto& [label, path] : outputs) {
    if (path.find('\0') != std::string::npos)
      return Status::usage(
          fmt::format("{} contains a NUL byte, which no file name can hold: give another path", label));
    if (sameFile(path, capture_json))
      return Status::usage(
          fmt::format("{} {} is the capture JSON the trace was read with: write to another file", label, path));
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
