// reservoir gate TRACE... [--max-peak-reserved BYTES] [--demand BYTES@POINT]... [--capacity BYTES]: a CI check
// on predicted memory; the verdict is the library's (replay/gate.h).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "edit_options.h"
#include "reservoir/replay/gate.h"
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

nlohmann::json traceJson(const replay::ConditionVerdict& c, const replay::TraceVerdict& t, const std::string& path) {
  nlohmann::json j{{"trace", path}, {"verdict", replay::verdictName(t.verdict)}};
  switch (c.kind) {
    case replay::ConditionVerdict::Kind::kPeakReserved:
      j["peak_reserved"] = t.value;
      j["event_index"] = t.event;
      break;
    case replay::ConditionVerdict::Kind::kDemand:
      j["free"] = t.verdict == replay::Verdict::kUnknown ? nlohmann::json(nullptr) : nlohmann::json(t.value);
      j["fits"] = t.verdict == replay::Verdict::kPass;
      j["times_reached"] = t.count;
      break;
    case replay::ConditionVerdict::Kind::kOom:
      j["oom"] = t.verdict == replay::Verdict::kFail
                     ? nlohmann::json{{"event_index", t.event}, {"size", t.value}, {"count", t.count}}
                     : nlohmann::json(nullptr);
      break;
  }
  j["capacity"] = t.capacity ? nlohmann::json(*t.capacity) : nlohmann::json(nullptr);
  return j;
}

nlohmann::json gateJson(const replay::GateVerdict& v, const std::vector<std::string>& paths,
                        const std::vector<replay::WhatIfReport>& reports, std::optional<sim::ByteCount> budget) {
  nlohmann::json conditions = nlohmann::json::array();
  for (const auto& c : v.conditions) {
    nlohmann::json j{{"kind", replay::conditionKindName(c.kind)},
                     {"verdict", replay::verdictName(c.verdict)},
                     {"worst_trace", paths[c.worst]},
                     {"reason", c.reason}};
    if (c.kind == replay::ConditionVerdict::Kind::kPeakReserved) j["budget"] = c.limit;
    if (c.kind == replay::ConditionVerdict::Kind::kDemand) {
      j["demand"] = c.text;
      j["point"] = c.point;
      j["bytes"] = c.limit;
    }
    j["traces"] = nlohmann::json::array();
    for (const auto& t : c.traces) j["traces"].push_back(traceJson(c, t, paths[t.trace]));
    conditions.push_back(std::move(j));
  }
  nlohmann::json per = nlohmann::json::array();
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const auto& r = reports[i].whatif;
    bool ok = true;
    for (const auto& c : v.conditions) ok = ok && c.traces[i].verdict == replay::Verdict::kPass;
    per.push_back(
        {{"trace", paths[i]}, {"pass", ok}, {"peak_reserved", r.peak_reserved.bytes}, {"oom", r.oom.has_value()}});
  }
  return {{"pass", v.pass},
          {"undecided", v.undecided},
          {"reason", v.reason},
          {"worst_trace", paths[v.worst_trace]},
          {"budget", budget ? nlohmann::json(*budget) : nlohmann::json(nullptr)},
          {"max_peak_reserved", reports[v.worst_trace].whatif.peak_reserved.bytes},
          {"conditions", conditions},
          {"traces", per}};
}

int runGate(const GateArgs& a, std::ostream& out, std::ostream& err) {
  replay::GateConditions conditions;
  if (!a.budget.empty()) {
    conditions.max_peak_reserved = sim::parseSize(a.budget);
    if (!conditions.max_peak_reserved) return usage(err, "--max-peak-reserved: not a size: '" + a.budget + "'");
  }
  auto w = makeWhatIfOptions(a.edits);
  if (!w) return usage(err, w.message());
  w->analyze_peak = false;
  conditions.fraction = w->fraction;
  for (const auto& e : w->edits)
    if (e.kind == replay::Edit::Kind::kDemand) conditions.demands.push_back(e);
  if (!replay::hasCondition(conditions, !a.edits.device.capacity.empty() || a.edits.device.fraction.has_value())) {
    err << "reservoir: gate needs a condition: --max-peak-reserved BYTES, --demand BYTES@POINT, or --capacity / "
           "--fraction (fail on a predicted out-of-memory)\nrun 'reservoir gate --help'\n";
    return kUsage;
  }
  std::vector<replay::WhatIfReport> reports;
  for (const auto& path : a.traces) {
    auto opened = openTrace(path, a.device, a.env, err);
    if (!opened) return fail(err, opened.message());
    auto rep = replay::runWhatIf(opened->trace->snapshot, opened->device, opened->env, *w);
    if (!rep) return fail(err, rep.status(), path + ": ");
    reports.push_back(std::move(*rep));
  }
  std::vector<replay::GateInput> inputs;
  for (std::size_t i = 0; i < reports.size(); ++i) inputs.push_back({a.traces[i], &reports[i]});
  auto v = replay::judgeGate(inputs, conditions);
  if (!v) return fail(err, v.message());
  if (a.json)
    out << gateJson(*v, a.traces, reports, conditions.max_peak_reserved).dump(2) << "\n";
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
