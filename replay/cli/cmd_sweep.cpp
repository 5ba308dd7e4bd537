// reservoir sweep TRACE: where should empty_cache go (and which settings help)?
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <thread>

#include "commands.h"
#include "common.h"
#include "edit_options.h"
#include "reservoir/replay/report_json.h"
#include "reservoir/replay/report_text.h"
#include "reservoir/replay/sweep.h"
#include "reservoir/simulator/sizes.h"

namespace reservoir::cli {
namespace {

struct SweepArgs {
  std::string trace;
  std::optional<std::int64_t> device;
  bool json = false;
  std::size_t top = 10;
  std::size_t max_candidates = 100;
  std::optional<unsigned> jobs;  // default: every core
  bool no_settings = false;
  std::string minimize;
  std::optional<long long> max_calls;
  std::optional<long long> steps;
  EditedRunFlags edited_run;
  EnvOptions env;
};

// --jobs N: at least 1, at most the cores there are (more threads only add memory and
// switching); 0 means every core.
Expected<unsigned> threadCount(std::optional<unsigned> jobs, std::ostream& err) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  if (!jobs) return cores;
  if (*jobs == 0) return Status::error("--jobs 0: give at least 1 thread (or leave --jobs out for every core)");
  if (*jobs > cores) {
    err << fmt::format("reservoir: note: --jobs {} is more than the {} core(s) here; using {}\n", *jobs, cores, cores);
    return cores;
  }
  return *jobs;
}

int runSweepCmd(const SweepArgs& a, std::ostream& out, std::ostream& err) {
  auto edited_run = makeEditedRunOptions(a.edited_run);
  if (!edited_run) return usage(err, edited_run.message());
  auto jobs = threadCount(a.jobs, err);
  if (!jobs) {
    err << "reservoir: " << jobs.message() << "\n";
    return kUsage;
  }
  auto opened = openTrace(a.trace, a.device, a.env, err);
  if (!opened) return fail(err, opened.message());
  const replay::Trace& trace = opened->trace;
  const std::size_t dev = opened->device;
  replay::SweepOptions o;
  static_cast<replay::EditedRunOptions&>(o) = std::move(*edited_run);
  o.max_candidates = a.max_candidates;
  o.jobs = *jobs;
  o.try_settings = !a.no_settings;
  auto objective = replay::parseSweepObjective(a.minimize);
  if (!objective) {
    err << "reservoir: --minimize: " << objective.message() << "\n";
    return kUsage;
  }
  o.objective = std::move(*objective);
  if (a.max_calls && *a.max_calls < 0) {
    err << fmt::format("reservoir: --max-calls {}: give 0 or more empty_cache calls\n", *a.max_calls);
    return kUsage;
  }
  if (a.steps && *a.steps < 1) {
    err << fmt::format("reservoir: --steps {}: give at least 1 training step\n", *a.steps);
    return kUsage;
  }
  if (a.max_calls) o.max_calls = static_cast<std::size_t>(*a.max_calls);
  if (a.steps) o.steps = static_cast<std::size_t>(*a.steps);
  auto prepared = replay::prepareTrace(trace.snapshot, dev, replay::editedRunEnvironment(opened->env, o));
  if (!prepared) return fail(err, a.trace + ": " + prepared.message());
  Progress progress(err, "sweeping");
  o.progress = [&](std::size_t d, std::size_t t) { progress(d, t); };
  auto rep = replay::runSweep(*prepared, o);
  if (!rep) return fail(err, rep.status(), a.trace + ": ");
  if (a.json) {
    out << replay::sweepJson(*rep, a.trace, a.top).dump(2) << "\n";
    return kOk;
  }
  out << replay::sweepReportText(*rep, a.trace, a.top);
  return kOk;
}

}  // namespace

void registerSweep(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand("sweep", "Search where empty_cache belongs (and which settings help)");
  cmd->add_option("trace", args->trace, "snapshot pickle")->required();
  cmd->add_option("--device", args->device, "CUDA device number");
  cmd->add_flag("--json", args->json, "machine-readable output");
  cmd->add_option("--top", args->top, "how many candidates to print (default 10)");
  cmd->add_option("--max-candidates", args->max_candidates, "how many candidates to replay (default 100)");
  cmd->add_option("--jobs", args->jobs, "threads, 1 to the number of cores (default: every core)");
  cmd->add_flag("--no-settings", args->no_settings, "only cleanup placements, no settings candidates");
  cmd->add_option("--minimize", args->minimize,
                  "peak (default), reserved:POINT (reserved memory there; a bare POINT means the same) or "
                  "peak-in:ANNOTATION (the peak inside that record_function range)");
  cmd->add_option("--max-calls", args->max_calls,
                  "at most N empty_cache calls in the whole trace (default: one per training step where the trace "
                  "shows steps)");
  cmd->add_option("--steps", args->steps, "training steps in the trace, when the trace does not show them");
  addEditedRunFlags(cmd, &args->edited_run);
  cmd->add_flag("--no-capture-json", args->env.no_capture_json, "ignore X.json beside X.pickle");
  cmd->callback([args, set_result, &out, &err] { set_result(runSweepCmd(*args, out, err)); });
}

}  // namespace reservoir::cli
