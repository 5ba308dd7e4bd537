// reservoir whatif TRACE...: baseline versus edited replay, per trace and the maximum over them.
#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "commands.h"
#include "common.h"
#include "edit_options.h"
#include "reservoir/replay/report_json.h"
#include "reservoir/replay/report_text.h"
#include "work_pool.h"

namespace reservoir::cli {
namespace {

struct WhatIfArgs {
  std::vector<std::string> traces;
  std::optional<std::int64_t> iteration;
  std::optional<std::int64_t> device;
  bool json = false;
  std::optional<unsigned> jobs;  // default: every core
  EnvOptions env;
  EditOptions edits;
};

// One item: trace `path`'s report as text and JSON and its two peaks; {"nothing_to_replay"} for a
// snapshot without history; or {"error"}.
std::string whatIfItem(const WhatIfArgs& a, const replay::WhatIfOptions& w, const std::string& path,
                       std::ostream& progress_err) {
  auto opened = openTrace(path, a.device, a.env, progress_err);
  if (!opened) return itemError(opened.status());
  if (opened->nothing_to_replay) return nlohmann::json{{"nothing_to_replay", *opened->nothing_to_replay}}.dump();
  auto rep = replay::runWhatIf(opened->trace.snapshot, opened->device, opened->env, w);
  if (!rep) return itemError(rep.status(), path + ": ");
  const auto& snap = opened->trace.snap();
  const nlohmann::json j{{"text", a.json ? std::string() : replay::whatIfReportText(snap, *rep, path)},
                         {"json", a.json ? replay::whatIfJson(snap, *rep, path) : nlohmann::json(nullptr)},
                         {"baseline_peak", rep->baseline.peak_reserved.bytes},
                         {"whatif_peak", rep->whatif.peak_reserved.bytes}};
  return j.dump();
}

// Snapshots without history answer nothing: one line each, or in JSON when no trace answered.
void reportNothingToReplay(const WhatIfArgs& a, const std::vector<std::pair<std::string, std::string>>& empty,
                           bool answered, std::ostream& out) {
  if (!a.json) {
    for (const auto& [path, why] : empty) out << why << "\n";
  } else if (!answered && !empty.empty()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& [path, why] : empty) {
      nlohmann::json one = replay::traceNamed(path);
      one["nothing_to_replay"] = why;
      j.push_back(std::move(one));
    }
    out << (j.size() == 1 ? j[0] : nlohmann::json{{"traces", j}}).dump(2) << "\n";
  }
}

int runWhatIfCmd(const WhatIfArgs& a, std::ostream& out, std::ostream& err) {
  auto w = makeWhatIfOptions(a.edits);
  if (!w) return fail(err, w.status());
  auto paths = expandTraceList(a.traces, a.iteration);
  if (!paths) return fail(err, paths.status());
  WorkPool& pool = workPool();
  const auto jobs = threadCount(a.jobs, err);
  if (!jobs) return usage(err, jobs.message());
  std::ostream& progress_err = paths->size() == 1 && pool.processes() == 1 ? err : nullStream();
  const auto results = pool.run(
      fileSizes(*paths), [&](std::size_t i) { return whatIfItem(a, *w, (*paths)[i], progress_err); }, *jobs, err);
  if (!pool.root()) return kOk;
  printMpiSummary(err);
  // The traces that were read, in order; the others are reported with their path.
  int code = kOk;
  std::vector<nlohmann::json> per_trace;
  std::vector<std::pair<std::string, std::string>> empty;
  std::string text;
  replay::MaxOverTraces max;
  for (std::size_t i = 0; i < results.size(); ++i) {
    auto r = nlohmann::json::parse(results[i]);
    if (r.contains("error")) {
      code = worstExitCode(code, failItem(err, r));
      continue;
    }
    if (r.contains("nothing_to_replay")) {
      empty.emplace_back((*paths)[i], r["nothing_to_replay"].get<std::string>());
      continue;
    }
    per_trace.push_back(std::move(r["json"]));
    text += r["text"].get<std::string>();
    max.include(r["baseline_peak"].get<std::int64_t>(), r["whatif_peak"].get<std::int64_t>());
  }
  reportNothingToReplay(a, empty, !per_trace.empty(), out);
  if (per_trace.empty()) return code;
  if (a.json) {
    nlohmann::json j = replay::whatIfJson(std::move(per_trace), max);
    addMpiObject(j);
    out << j.dump(2) << "\n";
    return code;
  }
  out << text;
  if (per_trace.size() > 1)
    out << fmt::format("max over {} traces: peak reserved {} -> {}\n", per_trace.size(),
                       sizeText(max.baseline_peak_reserved), sizeText(max.whatif_peak_reserved));
  return code;
}

}  // namespace

void registerWhatIf(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err) {
  auto args = std::make_shared<WhatIfArgs>();
  CLI::App* cmd =
      app.add_subcommand("whatif", "Predict reserved memory under edits: cleanups, releases, settings, capacity");
  cmd->add_option(
         "traces", args->traces,
         "snapshot pickle(s), @LIST (one path a line) or a glob; several ranks give per-rank results and the maximum")
      ->required();
  addIterationOption(cmd, &args->iteration);
  cmd->add_option("--device", args->device, "CUDA device number (default: the one with the most events)");
  cmd->add_option("--jobs", args->jobs, "traces analysed at once (default: the number of cores)");
  cmd->add_flag("--json", args->json, "machine-readable output");
  EnvOptions* env = &args->env;
  cmd->add_flag("--no-capture-json", env->no_capture_json, "ignore X.json beside X.pickle");
  addEditOptions(cmd, &args->edits);
  cmd->callback([args, set_result, &out, &err] { set_result(runWhatIfCmd(*args, out, err)); });
}

}  // namespace reservoir::cli
