// reservoir gate TRACE... --max-peak-reserved BYTES: a CI check on predicted memory.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "edit_options.h"
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
  auto budget = sim::parseSize(a.budget);
  if (!budget) return fail(err, "--max-peak-reserved: not a size: '" + a.budget + "'");
  auto w = makeWhatIfOptions(a.edits);
  if (!w) return fail(err, w.message());
  w->analyze_peak = false;
  std::string reason;
  std::int64_t worst = 0;
  std::string worst_trace;
  nlohmann::json per = nlohmann::json::array();
  for (const auto& path : a.traces) {
    auto opened = openTrace(path, a.device, a.env, err);
    if (!opened) return fail(err, opened.message());
    auto rep = replay::runWhatIf(opened->trace->snapshot, opened->device, opened->env, *w);
    if (!rep) return fail(err, path + ": " + rep.message());
    const auto& r = rep->whatif;
    per.push_back({{"trace", path}, {"peak_reserved", r.peak_reserved.bytes}, {"oom", r.oom.has_value()}});
    if (r.peak_reserved.bytes > worst) {
      worst = r.peak_reserved.bytes;
      worst_trace = path;
    }
    if (r.oom && reason.empty())
      reason = fmt::format("{}: predicted out of memory at event {} (malloc of {})", path, r.oom->event,
                           sim::formatSize(r.oom->size));
  }
  if (reason.empty() && worst > static_cast<std::int64_t>(*budget))
    reason = fmt::format("{}: predicted peak reserved {} exceeds the budget {} by {}", worst_trace,
                         sim::formatSize(static_cast<std::uint64_t>(worst)), sim::formatSize(*budget),
                         sim::formatSize(static_cast<std::uint64_t>(worst) - *budget));
  if (a.json) {
    out << nlohmann::json{{"pass", reason.empty()},
                          {"reason", reason},
                          {"budget", *budget},
                          {"max_peak_reserved", worst},
                          {"traces", per}}
               .dump(2)
        << "\n";
  } else if (reason.empty()) {
    out << fmt::format("OK: predicted peak reserved {} <= budget {} ({} trace(s))\n",
                       sim::formatSize(static_cast<std::uint64_t>(worst)), sim::formatSize(*budget), a.traces.size());
  } else {
    out << "FAIL: " << reason << "\n";
  }
  return reason.empty() ? kOk : kFailed;
}

}  // namespace

void registerGate(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err) {
  auto args = std::make_shared<GateArgs>();
  CLI::App* cmd = app.add_subcommand("gate", "Exit 1 when the predicted peak reserved exceeds a budget (for CI)");
  cmd->add_option("traces", args->traces, "snapshot pickle(s); the maximum over them is checked")->required();
  cmd->add_option("--max-peak-reserved", args->budget, "the budget, e.g. 60GiB")->required();
  cmd->add_option("--device", args->device, "CUDA device number");
  cmd->add_flag("--json", args->json, "machine-readable output");
  cmd->add_flag("--no-capture-json", args->env.no_capture_json, "ignore X.json beside X.pickle");
  addEditOptions(cmd, &args->edits);
  cmd->callback([args, set_result, &out, &err] { set_result(runGate(*args, out, err)); });
}

}  // namespace reservoir::cli
