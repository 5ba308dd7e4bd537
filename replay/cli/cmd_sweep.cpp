// reservoir sweep TRACE...: where should empty_cache go (and which settings help)?
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
#include "work_pool.h"

namespace reservoir::cli {
namespace {

struct SweepArgs {
  std::vector<std::string> traces;
  std::optional<std::int64_t> iteration;
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

// One item: slice `slice` of `slices` of trace `path`'s sweep, as sweepJson with every candidate.
std::string sweepItem(const SweepArgs& a, replay::SweepOptions o, const std::string& path, std::size_t slice,
                      std::size_t slices, std::ostream& progress_err) {
  auto opened = openTrace(path, a.device, a.env, progress_err);
  if (!opened) return itemError(opened.status());
  // No history: no baseline to search from (it ranked candidates against "baseline 0 bytes").
  if (opened->nothing_to_replay) return itemError(*opened->nothing_to_replay);
  auto prepared =
      replay::prepareTrace(opened->trace.snapshot, opened->device, replay::editedRunEnvironment(opened->env, o));
  if (!prepared) return itemError(prepared.status(), path + ": ");
  o.slice = slice;
  o.slices = slices;
  Progress progress(progress_err, "sweeping");
  o.progress = [&](std::size_t d, std::size_t t) { progress(d, t); };
  auto rep = replay::runSweep(*prepared, o);
  if (!rep) return itemError(rep.status(), path + ": ");
  return replay::sweepJson(*rep, path, rep->candidates.size()).dump();
}

// Slices per trace: one in a single process; in a job, enough that every process gets work
// when there are fewer traces than processes (a slice repeats its trace's load and baseline).
std::size_t slicesPerTrace(std::size_t traces, int processes) {
  if (processes <= 1 || traces == 0) return 1;
  const std::size_t want = (2 * static_cast<std::size_t>(processes) + traces - 1) / traces;
  return std::clamp<std::size_t>(want, 1, 8);
}

// The sweep's options from the flags; errors are usage errors.
Expected<replay::SweepOptions> sweepOptions(const SweepArgs& a, unsigned jobs) {
  auto edited_run = makeEditedRunOptions(a.edited_run);
  if (!edited_run) return Status::usage(edited_run.message());
  replay::SweepOptions o;
  static_cast<replay::EditedRunOptions&>(o) = std::move(*edited_run);
  o.max_candidates = a.max_candidates;
  o.jobs = jobs;
  o.try_settings = !a.no_settings;
  auto objective = replay::parseSweepObjective(a.minimize);
  if (!objective) return Status::usage("--minimize: " + objective.message());
  o.objective = std::move(*objective);
  if (a.max_calls && *a.max_calls < 0)
    return Status::usage(fmt::format("--max-calls {}: give 0 or more empty_cache calls", *a.max_calls));
  if (a.steps && *a.steps < 1) return Status::usage(fmt::format("--steps {}: give at least 1 training step", *a.steps));
  if (a.max_calls) o.max_calls = static_cast<std::size_t>(*a.max_calls);
  if (a.steps) o.steps = static_cast<std::size_t>(*a.steps);
  return o;
}

// Every trace's slices put back together, in the order of the traces; the traces that failed are
// reported with their path and `code` raised.
std::vector<replay::SweepReport> collectTraces(const std::vector<std::string>& paths, std::size_t slices,
                                               const std::vector<std::string>& results, std::vector<std::string>& names,
                                               int& code, std::ostream& err) {
  std::vector<replay::SweepReport> per_trace;
  for (std::size_t t = 0; t < paths.size(); ++t) {
    std::vector<replay::SweepReport> parts;
    for (std::size_t k = 0; k < slices; ++k) {
      const auto r = nlohmann::json::parse(results[t * slices + k]);
      if (r.contains("error")) {
        code = worstExitCode(code, failItem(err, r));
        break;  // every slice of a trace fails alike: one message
      }
      parts.push_back(replay::sweepReportFromJson(r));
    }
    if (parts.size() != slices) continue;
    names.push_back(paths[t]);
    per_trace.push_back(replay::mergeSweepSlices(parts));
  }
  return per_trace;
}

int runSweepCmd(const SweepArgs& a, std::ostream& out, std::ostream& err) {
  WorkPool& pool = workPool();
  // In a job of several processes, one thread each unless --jobs says otherwise.
  auto jobs = pool.processes() > 1 && !a.jobs ? Expected<unsigned>(1u) : threadCount(a.jobs, err);
  if (!jobs) return usage(err, jobs.message());
  auto o = sweepOptions(a, *jobs);
  if (!o) return fail(err, o.status());
  auto paths = expandTraceList(a.traces, a.iteration);
  if (!paths) return fail(err, paths.status());
  const std::size_t slices = slicesPerTrace(paths->size(), pool.processes());
  std::vector<std::uint64_t> costs;
  for (std::uint64_t size : fileSizes(*paths)) costs.insert(costs.end(), slices, size / slices + 1);
  std::ostream& progress_err = costs.size() == 1 ? err : nullStream();
  const auto results = pool.run(
      costs, [&](std::size_t i) { return sweepItem(a, *o, (*paths)[i / slices], i % slices, slices, progress_err); }, 1,
      err);
  if (!pool.root()) return kOk;
  printMpiSummary(err);
  int code = kOk;
  std::vector<std::string> names;
  const auto per_trace = collectTraces(*paths, slices, results, names, code, err);
  if (per_trace.empty()) return code;
  const replay::SweepReport rep = replay::worstOverTraces(per_trace);
  if (a.json) {
    auto j = replay::sweepJson(rep, names, a.top);
    addMpiObject(j);
    out << j.dump(2) << "\n";
    return code;
  }
  const std::string title =
      names.size() == 1 ? names[0] : fmt::format("{} traces, each candidate scored on its worst trace", names.size());
  out << replay::sweepReportText(rep, title, a.top);
  return code;
}

}  // namespace

void registerSweep(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand("sweep", "Search where empty_cache belongs (and which settings help)");
  cmd->add_option("traces", args->traces,
                  "snapshot pickle(s), @LIST (one path a line) or a glob; several (the ranks of one job): each "
                  "candidate is scored on its worst trace")
      ->required();
  addIterationOption(cmd, &args->iteration);
  cmd->add_option("--device", args->device, "CUDA device number");
  cmd->add_flag("--json", args->json, "machine-readable output");
  cmd->add_option("--top", args->top, "how many candidates to print (default 10)");
  cmd->add_option("--max-candidates", args->max_candidates, "how many candidates to replay (default 100)");
  cmd->add_option("--jobs", args->jobs,
                  "threads, 1 to the number of cores (default: every core; 1 per process in an MPI job)");
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
