// reservoir gate TRACE... [--max-peak-reserved BYTES] [--demand BYTES@POINT]... [--capacity BYTES]: a CI check
// on predicted memory; the verdict is the library's (replay/gate.h).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "edit_options.h"
#include "reservoir/replay/gate.h"
#include "reservoir/replay/option_text.h"
#include "reservoir/replay/report_json.h"
#include "reservoir/simulator/sizes.h"
#include "work_pool.h"

namespace reservoir::cli {
namespace {

struct GateArgs {
  std::vector<std::string> traces;
  std::optional<std::int64_t> iteration;
  std::optional<std::int64_t> device;
  std::string budget;
  bool json = false;
  EnvOptions env;
  EditOptions edits;
};

// The verdict's first word: a pass, a failure among the traces judged, a condition that could not be
// judged, or traces that could not be read (and nothing failed among the others).
const char* headword(const replay::GateVerdict& v, bool failed_among_read) {
  if (v.pass) return "OK: ";
  if (failed_among_read) return "FAIL: ";
  if (!v.unjudged.empty()) return "NOT JUDGED: ";
  return v.undecided ? "UNDECIDED: " : "FAIL: ";
}

// The verdict over the traces read (`unread`: the others), printed as one process prints it.
int judgeAndPrint(const GateArgs& a, const replay::GateConditions& conditions, const std::vector<std::string>& names,
                  const std::vector<replay::WhatIfReport>& reports, const std::vector<std::string>& unread,
                  std::ostream& out, std::ostream& err) {
  std::vector<replay::GateInput> inputs;
  for (std::size_t i = 0; i < reports.size(); ++i) inputs.push_back({names[i], &reports[i]});
  auto v = replay::judgeGate(inputs, conditions);
  if (!v) return fail(err, v.status());
  const bool failed_among_read = !v->pass && !v->undecided;
  replay::addUnjudgedTraces(*v, unread);
  if (a.json) {
    auto j = replay::gateJson(*v, names, reports, conditions.max_peak_reserved);
    addMpiObject(j);
    out << j.dump(2) << "\n";
  } else {
    out << headword(*v, failed_among_read) << (v->pass ? v->summary : v->reason) << "\n";
  }
  if (v->undecided) return kUsage;
  return v->pass ? kOk : kFailed;
}

// One item: what the gate reads of trace `path`'s what-if report, or {"error"}.
std::string gateItem(const GateArgs& a, const replay::WhatIfOptions& w, const std::string& path,
                     std::ostream& progress_err) {
  auto opened = openTrace(path, a.device, a.env, progress_err);
  if (!opened) return itemError(opened.status());
  // No history: nothing to judge, so never a pass (it passed on a predicted peak of 0 bytes).
  if (opened->nothing_to_replay) return itemError(*opened->nothing_to_replay);
  auto rep = replay::runWhatIf(opened->trace.snapshot, opened->device, opened->env, w);
  if (!rep) return itemError(rep.status(), path + ": ");
  return replay::gateFactsJson(*rep).dump();
}

int runGate(const GateArgs& a, std::ostream& out, std::ostream& err) {
  auto w = makeWhatIfOptions(a.edits);
  if (!w) return usage(err, w.message());
  w->analyze_peak = false;
  auto gate_conditions = replay::gateConditions(a.budget, *w, cliWording());
  if (!gate_conditions) return fail(err, gate_conditions.status());
  const replay::GateConditions& conditions = *gate_conditions;
  if (!replay::hasCondition(conditions, !a.edits.device.capacity.empty() || a.edits.device.fraction.has_value())) {
    err << "reservoir: gate needs a condition: --max-peak-reserved BYTES, --demand BYTES@POINT, or --capacity / "
           "--fraction (fail on a predicted out-of-memory)\nrun 'reservoir gate --help'\n";
    return kUsage;
  }
  auto paths = expandTraceList(a.traces, a.iteration);
  if (!paths) return fail(err, paths.status());
  WorkPool& pool = workPool();
  std::ostream& progress_err = paths->size() == 1 && pool.processes() == 1 ? err : nullStream();
  const auto results = pool.run(
      fileSizes(*paths), [&](std::size_t i) { return gateItem(a, *w, (*paths)[i], progress_err); }, 1, err);
  if (!pool.root()) return kOk;
  printMpiSummary(err);
  // The traces that were read decide; the others are reported with their path (exit 3).
  int code = kOk;
  std::vector<std::string> names, unread;
  std::vector<replay::WhatIfReport> reports;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto r = nlohmann::json::parse(results[i]);
    if (r.contains("error")) {
      code = worstExitCode(code, failItem(err, r));
      unread.push_back((*paths)[i]);
      continue;
    }
    names.push_back((*paths)[i]);
    reports.push_back(replay::gateFactsFromJson(r));
  }
  if (reports.empty()) return code;
  const int verdict = judgeAndPrint(a, conditions, names, reports, unread, out, err);
  return code == kOk ? verdict : code;
}

}  // namespace

void registerGate(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err) {
  auto args = std::make_shared<GateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "gate",
      "Exit 1 when a condition fails (for CI): the predicted peak reserved over --max-peak-reserved, a --demand "
      "that does not fit, an out-of-memory under --capacity/--fraction");
  cmd->add_option("traces", args->traces,
                  "snapshot pickle(s), e.g. one per rank, @LIST (one path a line) or a glob; the worst decides")
      ->required();
  addIterationOption(cmd, &args->iteration);
  cmd->add_option("--max-peak-reserved", args->budget, "a budget on the edited run's peak reserved, e.g. 60GiB");
  cmd->add_option("--device", args->device, "CUDA device number");
  cmd->add_flag("--json", args->json, "machine-readable output");
  cmd->add_flag("--no-capture-json", args->env.no_capture_json, "ignore X.json beside X.pickle");
  addEditOptions(cmd, &args->edits);
  cmd->callback([args, set_result, &out, &err] { set_result(runGate(*args, out, err)); });
}

}  // namespace reservoir::cli
