// The reports as JSON: one rendering for every front end (the CLI's --json, the Python
// package's dicts, the MPI driver's reduced output), so the keys documented once hold
// everywhere.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "reservoir/replay/conformance.h"
#include "reservoir/replay/gate.h"
#include "reservoir/replay/peak_explain.h"
#include "reservoir/replay/summary.h"
#include "reservoir/replay/sweep.h"
#include "reservoir/replay/trace.h"
#include "reservoir/replay/whatif.h"

namespace reservoir::replay {

// A result names its trace: "trace" (the path) and, when the file's name gives one
// (traces::rankInFileName: rankR_memory_snapshot.pickle, oom_rankN.pickle, X.rankN.pickle),
// "rank". Every result that names a trace does it this way.
void nameTrace(nlohmann::json& j, const std::string& path);
nlohmann::json traceNamed(const std::string& path);  // {"trace"[, "rank"]}

// What pins the cache at a peak (peak_explain.h's cachePins), the "at_peak" of a run.
nlohmann::json cachePinsJson(const traces::Snapshot& snap, const CachePins& pins);
// One run's figures (a what-if report's "baseline" or "whatif").
nlohmann::json runJson(const traces::Snapshot& snap, const RunResult& r);
// One trace's what-if report.
nlohmann::json whatIfJson(const traces::Snapshot& snap, const WhatIfReport& rep, const std::string& path);

// A what-if over several ranks: each trace with its report.
struct RankWhatIf {
  Trace trace;
  WhatIfReport report;
};
struct MaxOverTraces {
  std::int64_t baseline_peak_reserved = 0;
  std::int64_t whatif_peak_reserved = 0;
  void include(std::int64_t baseline_peak, std::int64_t whatif_peak);  // one more trace's peaks
};
MaxOverTraces maxOverTraces(const std::vector<RankWhatIf>& ranks);
// One trace: its report as above; several: {"traces": [...], "max_over_traces": {...}}.
nlohmann::json whatIfJson(const std::vector<RankWhatIf>& ranks);
// The same from each trace's report already rendered (whatIfJson of one trace, e.g. made on
// another process of an MPI job) and the maxima over them.
nlohmann::json whatIfJson(std::vector<nlohmann::json> per_trace, const MaxOverTraces& max);

// `reservoir info`: the snapshot and the summaries of the devices chosen.
nlohmann::json infoJson(const traces::Snapshot& snap, const std::string& path, const std::vector<DeviceSummary>& sums);
// `reservoir check`: the conformance report.
nlohmann::json conformanceJson(const ConformanceReport& r, const std::string& path);
// Several traces' checks: each one's answer (conformanceJson) in order, how many were exact and
// not, and the traces that could not be read ({"trace", "error"}).
nlohmann::json checksJson(nlohmann::json per_trace, std::size_t exact, std::size_t not_exact,
                          nlohmann::json unreadable);
// `reservoir gate`: the verdict over the traces `paths` (in the order of `reports`).
nlohmann::json gateJson(const GateVerdict& v, const std::vector<std::string>& paths,
                        const std::vector<WhatIfReport>& reports, std::optional<sim::ByteCount> budget);
// What judgeGate and gateJson read of a what-if report (the edited run's peak, out-of-memory and
// demands; the capacity and its source), and a report holding just that read back: for reports
// that travel between processes. Keep it in step with gate_verdict.cpp (tests compare).
nlohmann::json gateFactsJson(const WhatIfReport& report);
WhatIfReport gateFactsFromJson(const nlohmann::json& j);
// `reservoir sweep`: the best `top` candidates.
nlohmann::json sweepJson(const SweepReport& rep, const std::string& path, std::size_t top);
// A sweep over several traces (worstOverTraces): as above with "traces" (the paths) and
// "scored_as" instead of "trace"; one path gives the one-trace report.
nlohmann::json sweepJson(const SweepReport& rep, const std::vector<std::string>& paths, std::size_t top);
// The report back from sweepJson(rep, path, every candidate): for reports that travel as JSON.
SweepReport sweepReportFromJson(const nlohmann::json& j);

}  // namespace reservoir::replay
