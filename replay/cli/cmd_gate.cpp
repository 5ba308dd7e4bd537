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

namespace reservoir::cli {
namespace {

struct GateArgs {
  std::vector<std::string> traces;
  std::optional<std::int64_t> device;
  std::string budget;
  bool json = false;
  EnvOptions env;
  EditOptions edits;
};

int runGate(const GateArgs& a, std::ostream& out, std::ostream& err) {
  auto w = makeWhatIfOptions(a.edits);
  if (!w) return usage(err, w.message());
  w->analyze_peak = false;
  auto gate_conditions = replay::gateConditions(a.budget, *w, "--");
  if (!gate_conditions) return fail(err, gate_conditions.status());
  const replay::GateConditions& conditions = *gate_conditions;
  if (!replay::hasCondition(conditions, !a.edits.device.capacity.empty() || a.edits.device.fraction.has_value())) {
    err << "reservoir: gate needs a condition: --max-peak-reserved BYTES, --demand BYTES@POINT, or --capacity / "
           "--fraction (fail on a predicted out-of-memory)\nrun 'reservoir gate --help'\n";
    return kUsage;
  }
  std::vector<replay::WhatIfReport> reports;
  for (const auto& path : a.traces) {
    auto opened = openTrace(path, a.device, a.env, err);
    if (!opened) return fail(err, opened.message());
    auto rep = replay::runWhatIf(opened->trace.snapshot, opened->device, opened->env, *w);
    if (!rep) return fail(err, rep.status(), path + ": ");
    reports.push_back(std::move(*rep));
  }
  std::vector<replay::GateInput> inputs;
  for (std::size_t i = 0; i < reports.size(); ++i) inputs.push_back({a.traces[i], &reports[i]});
  auto v = replay::judgeGate(inputs, conditions);
  if (!v) return fail(err, v.message());
  if (a.json)
    out << replay::gateJson(*v, a.traces, reports, conditions.max_peak_reserved).dump(2) << "\n";
  else if (v->pass)
    out << "OK: " << v->summary << "\n";
  else
    out << (v->undecided ? "UNDECIDED: " : "FAIL: ") << v->reason << "\n";
  if (v->undecided) return kUsage;
  return v->pass ? kOk : kFailed;
}

}  // namespace

void registerGate(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err) {
  auto args = std::make_shared<GateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "gate",
      "Exit 1 when a condition fails (for CI): the predicted peak reserved over --max-peak-reserved, a --demand "
      "that does not fit, an out-of-memory under --capacity/--fraction");
  cmd->add_option("traces", args->traces, "snapshot pickle(s), e.g. one per rank; the worst decides")->required();
  cmd->add_option("--max-peak-reserved", args->budget, "a budget on the edited run's peak reserved, e.g. 60GiB");
  cmd->add_option("--device", args->device, "CUDA device number");
  cmd->add_flag("--json", args->json, "machine-readable output");
  cmd->add_flag("--no-capture-json", args->env.no_capture_json, "ignore X.json beside X.pickle");
  addEditOptions(cmd, &args->edits);
  cmd->callback([args, set_result, &out, &err] { set_result(runGate(*args, out, err)); });
}

}  // namespace reservoir::cli
