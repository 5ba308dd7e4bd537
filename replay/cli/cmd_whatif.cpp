// reservoir whatif TRACE...: baseline versus edited replay, per trace and the maximum over them.
#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "edit_options.h"
#include "whatif_output.h"

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

struct Outcome {
  std::string path;
  std::unique_ptr<LoadedTrace> trace;  // what the report's environment pointed into
  std::optional<replay::WhatIfReport> report;
  std::string error;
  bool usage = false;  // the error is a usage error (a point or selector that matches nothing)
};

Outcome analyzeOne(const std::string& path, const WhatIfArgs& a, const replay::WhatIfOptions& w, std::ostream& err) {
  Outcome o;
  o.path = path;
  auto opened = openTrace(path, a.device, a.env, err);
  if (!opened) {
    o.error = opened.message();
    return o;
  }
  o.trace = std::move(opened->trace);  // the heap object stays put: opened->env still points into it
  auto rep = replay::runWhatIf(o.trace->snapshot, opened->device, opened->env, w);
  if (!rep) {
    o.error = path + ": " + rep.message();
    o.usage = rep.status().isUsage();
  } else
    o.report = std::move(*rep);
  return o;
}

int runWhatIfCmd(const WhatIfArgs& a, std::ostream& out, std::ostream& err) {
  auto w = makeWhatIfOptions(a.edits);
  if (!w) return usage(err, w.message());
  const unsigned jobs = a.jobs ? a.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::vector<Outcome> outcomes(a.traces.size());
  std::size_t next = 0;
  while (next < a.traces.size()) {
    std::vector<std::future<Outcome>> batch;
    for (unsigned k = 0; k < jobs && next < a.traces.size(); ++k, ++next)
      batch.push_back(std::async(std::launch::async, [&, i = next] { return analyzeOne(a.traces[i], a, *w, err); }));
    for (std::size_t k = 0; k < batch.size(); ++k) outcomes[next - batch.size() + k] = batch[k].get();
  }
  for (const auto& o : outcomes)
    if (!o.error.empty()) return o.usage ? usage(err, o.error) : fail(err, o.error);
  if (a.json) {
    if (outcomes.size() == 1) {
      out << whatIfJson(outcomes[0].trace->snapshot, *outcomes[0].report, outcomes[0].path).dump(2) << "\n";
      return kOk;
    }
    nlohmann::json j;
    j["traces"] = nlohmann::json::array();
    std::int64_t mb = 0, mw = 0;
    for (const auto& o : outcomes) {
      j["traces"].push_back(whatIfJson(o.trace->snapshot, *o.report, o.path));
      mb = std::max(mb, o.report->baseline.peak_reserved.bytes);
      mw = std::max(mw, o.report->whatif.peak_reserved.bytes);
    }
    j["max_over_traces"] = {{"baseline_peak_reserved", mb}, {"whatif_peak_reserved", mw}};
    out << j.dump(2) << "\n";
    return kOk;
  }
  std::int64_t mb = 0, mw = 0;
  for (const auto& o : outcomes) {
    printWhatIf(out, o.trace->snapshot, *o.report, o.path);
    mb = std::max(mb, o.report->baseline.peak_reserved.bytes);
    mw = std::max(mw, o.report->whatif.peak_reserved.bytes);
  }
  if (outcomes.size() > 1)
    out << fmt::format("max over {} traces: peak reserved {} -> {}\n", outcomes.size(), sizeText(mb), sizeText(mw));
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
