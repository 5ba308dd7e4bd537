// reservoir whatif TRACE...: baseline versus edited replay, per trace and the maximum over them.
#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "edit_options.h"
#include "reservoir/replay/report_json.h"
#include "reservoir/replay/report_text.h"

namespace reservoir::cli {
namespace {

struct WhatIfArgs {
  std::vector<std::string> traces;
  std::optional<std::int64_t> device;
  bool json = false;
  unsigned jobs = 0;
  EnvOptions env;
  EditOptions edits;
};

// One trace's result, or why it has none.
struct Outcome {
  std::optional<replay::RankWhatIf> result;
  std::string error;
  std::string nothing_to_replay;  // the snapshot has no allocation history
  std::string path;
  bool usage = false;  // the error is a usage error (a point or selector that matches nothing)
};

Outcome analyzeOne(const std::string& path, const WhatIfArgs& a, const replay::WhatIfOptions& w, std::ostream& err) {
  auto opened = openTrace(path, a.device, a.env, err);
  if (!opened) return Outcome{std::nullopt, opened.message(), {}, path};
  if (opened->nothing_to_replay) return Outcome{std::nullopt, {}, *opened->nothing_to_replay, path};
  auto rep = replay::runWhatIf(opened->trace.snapshot, opened->device, opened->env, w);
  if (!rep) return Outcome{std::nullopt, path + ": " + rep.message(), {}, path, rep.status().isUsage()};
  return Outcome{replay::RankWhatIf{std::move(opened->trace), std::move(*rep)}, {}, {}, path};
}

// Analyses the traces `jobs` at a time, keeping their order.
std::vector<Outcome> analyzeAll(const WhatIfArgs& a, const replay::WhatIfOptions& w, std::ostream& err) {
  const unsigned jobs = a.jobs ? a.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::vector<Outcome> outcomes(a.traces.size());
  std::size_t next = 0;
  while (next < a.traces.size()) {
    std::vector<std::future<Outcome>> batch;
    for (unsigned k = 0; k < jobs && next < a.traces.size(); ++k, ++next)
      batch.push_back(std::async(std::launch::async, [&, i = next] { return analyzeOne(a.traces[i], a, w, err); }));
    for (std::size_t k = 0; k < batch.size(); ++k) outcomes[next - batch.size() + k] = batch[k].get();
  }
  return outcomes;
}

int runWhatIfCmd(const WhatIfArgs& a, std::ostream& out, std::ostream& err) {
  auto w = makeWhatIfOptions(a.edits);
  if (!w) return fail(err, w.status());
  std::vector<replay::RankWhatIf> ranks;
  std::vector<Outcome> empty;
  for (auto& o : analyzeAll(a, *w, err)) {
    if (!o.error.empty()) return o.usage ? usage(err, o.error) : fail(err, o.error);
    if (!o.nothing_to_replay.empty())
      empty.push_back(std::move(o));
    else
      ranks.push_back(std::move(*o.result));
  }
  // Snapshots without history answer nothing; the others are reported as usual.
  for (const auto& o : empty)
    if (!a.json) out << o.nothing_to_replay << "\n";
  if (ranks.empty()) {
    if (a.json) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& o : empty) j.push_back({{"trace", o.path}, {"nothing_to_replay", o.nothing_to_replay}});
      out << (j.size() == 1 ? j[0] : nlohmann::json{{"traces", j}}).dump(2) << "\n";
    }
    return kOk;
  }
  if (a.json) {
    out << replay::whatIfJson(ranks).dump(2) << "\n";
    return kOk;
  }
  for (const auto& r : ranks) out << replay::whatIfReportText(r.trace.snap(), r.report, r.trace.path);
  if (ranks.size() > 1) {
    const auto m = replay::maxOverTraces(ranks);
    out << fmt::format("max over {} traces: peak reserved {} -> {}\n", ranks.size(), sizeText(m.baseline_peak_reserved),
                       sizeText(m.whatif_peak_reserved));
  }
  return kOk;
}

}  // namespace

void registerWhatIf(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err) {
  auto args = std::make_shared<WhatIfArgs>();
  CLI::App* cmd =
      app.add_subcommand("whatif", "Predict reserved memory under edits: cleanups, releases, settings, capacity");
  cmd->add_option("traces", args->traces, "snapshot pickle(s); several ranks give per-rank results and the maximum")
      ->required();
  cmd->add_option("--device", args->device, "CUDA device number (default: the one with the most events)");
  cmd->add_option("--jobs", args->jobs, "traces analysed at once (default: the number of cores)");
  cmd->add_flag("--json", args->json, "machine-readable output");
  EnvOptions* env = &args->env;
  cmd->add_flag("--no-capture-json", env->no_capture_json, "ignore X.json beside X.pickle");
  addEditOptions(cmd, &args->edits);
  cmd->callback([args, set_result, &out, &err] { set_result(runWhatIfCmd(*args, out, err)); });
}

}  // namespace reservoir::cli
