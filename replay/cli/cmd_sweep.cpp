// reservoir sweep TRACE...: where should empty_cache go (and which settings help)?
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <thread>

#include "commands.h"
#include "common.h"
#include "edit_options.h"
#include "reservoir/replay/report_json.h"
#include "reservoir/replay/sweep.h"
#include "reservoir/simulator/sizes.h"
#include "work_pool.h"

namespace reservoir::cli {
namespace {

struct SweepArgs {
  std::vector<std::string> traces;
  std::optional<std::int64_t> device;
  bool json = false;
  std::size_t top = 10;
  std::size_t max_candidates = 100;
  std::optional<unsigned> jobs;  // default: every core
  bool no_settings = false;
  std::string minimize;
  EditedRunFlags edited_run;
  EnvOptions env;
};

std::string flagsText(const std::vector<std::string>& flags) {
  std::string out;
  for (std::size_t i = 0; i < flags.size(); i += 2)
    out += fmt::format("{}{} '{}'", out.empty() ? "" : " ", flags[i], flags[i + 1]);
  return out;
}

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

// One item: slice `slice` of `slices` of trace `path`'s sweep, as sweepJson with every candidate.
std::string sweepItem(const SweepArgs& a, replay::SweepOptions o, const std::string& path, std::size_t slice,
                      std::size_t slices, std::ostream& progress_err) {
  auto opened = openTrace(path, a.device, a.env, progress_err);
  if (!opened) return itemError(opened.message());
  auto prepared =
      replay::prepareTrace(opened->trace.snapshot, opened->device, replay::editedRunEnvironment(opened->env, o));
  if (!prepared) return itemError(path + ": " + prepared.message());
  o.slice = slice;
  o.slices = slices;
  Progress progress(progress_err, "sweeping");
  o.progress = [&](std::size_t d, std::size_t t) { progress(d, t); };
  auto rep = replay::runSweep(*prepared, o);
  if (!rep) return itemError(path + ": " + rep.message());
  return replay::sweepJson(*rep, path, rep->candidates.size()).dump();
}

void printSweep(const replay::SweepReport& rep, const std::string& title, std::size_t top, std::ostream& out) {
  out << fmt::format("{}: {} candidates in {:.2f} s, ranked by {} (then by empty_cache calls)\n", title, rep.evaluated,
                     rep.seconds, rep.objective);
  out << fmt::format(
      "baseline: peak reserved {}{}\n", sizeText(rep.baseline_peak_reserved),
      rep.baseline_reserved_at_point ? ", " + rep.objective + " " + sizeText(*rep.baseline_reserved_at_point) : "");
  for (std::size_t i = 0; i < rep.candidates.size() && i < top; ++i) {
    const auto& c = rep.candidates[i];
    out << fmt::format(
        "{:>3}. saves {:>12}  peak reserved {:>12}{}  {} empty_cache call(s){}\n     {}\n     {}\n", i + 1,
        sim::formatSize(static_cast<std::uint64_t>(std::max<std::int64_t>(c.saving, 0))),
        sim::formatSize(static_cast<std::uint64_t>(c.peak_reserved)),
        c.reserved_at_point
            ? fmt::format("  at point {:>12}", sim::formatSize(static_cast<std::uint64_t>(*c.reserved_at_point)))
            : "",
        c.empty_cache_calls, c.oom ? "  (OOM!)" : "", flagsText(c.edits), c.description);
  }
}

// Slices per trace: one in a single process; in a job, enough that every process gets work
// when there are fewer traces than processes (a slice repeats its trace's load and baseline).
std::size_t slicesPerTrace(std::size_t traces, int processes) {
  if (processes <= 1 || traces == 0) return 1;
  const std::size_t want = (2 * static_cast<std::size_t>(processes) + traces - 1) / traces;
  return std::clamp<std::size_t>(want, 1, 8);
}

Expected<replay::SweepOptions> sweepOptions(const SweepArgs& a, unsigned jobs) {
  auto edited_run = makeEditedRunOptions(a.edited_run);
  if (!edited_run) return edited_run.status();
  replay::SweepOptions o;
  static_cast<replay::EditedRunOptions&>(o) = std::move(*edited_run);
  o.max_candidates = a.max_candidates;
  o.jobs = jobs;
  o.try_settings = !a.no_settings;
  if (!a.minimize.empty() && a.minimize != "peak") {
    auto p = replay::parsePoint(a.minimize);
    if (!p) return Status::error("--minimize: " + p.message());
    o.minimize_at = *p;
  }
  return o;
}

int runSweepCmd(const SweepArgs& a, std::ostream& out, std::ostream& err) {
  WorkPool& pool = workPool();
  // In a job of several processes, one thread each unless --jobs says otherwise.
  auto jobs = pool.processes() > 1 && !a.jobs ? Expected<unsigned>(1u) : threadCount(a.jobs, err);
  if (!jobs) {
    err << "reservoir: " << jobs.message() << "\n";
    return kUsage;
  }
  auto o = sweepOptions(a, *jobs);
  if (!o) return fail(err, o.message());
  auto paths = expandTraceList(a.traces);
  if (!paths) return fail(err, paths.message());
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
  std::vector<replay::SweepReport> per_trace;
  for (std::size_t t = 0; t < paths->size(); ++t) {
    std::vector<replay::SweepReport> parts;
    for (std::size_t k = 0; k < slices; ++k) {
      const auto r = nlohmann::json::parse(results[t * slices + k]);
      if (r.contains("error")) {
        code = worstExitCode(code, fail(err, r["error"].get<std::string>()));
        break;  // every slice of a trace fails alike: one message
      }
      parts.push_back(replay::sweepReportFromJson(r));
    }
    if (parts.size() != slices) continue;
    names.push_back((*paths)[t]);
    per_trace.push_back(replay::mergeSweepSlices(parts));
  }
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
  printSweep(rep, title, a.top, out);
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
  cmd->add_option("--device", args->device, "CUDA device number");
  cmd->add_flag("--json", args->json, "machine-readable output");
  cmd->add_option("--top", args->top, "how many candidates to print (default 10)");
  cmd->add_option("--max-candidates", args->max_candidates, "how many candidates to replay (default 100)");
  cmd->add_option("--jobs", args->jobs,
                  "threads, 1 to the number of cores (default: every core; 1 per process in an MPI job)");
  cmd->add_flag("--no-settings", args->no_settings, "only cleanup placements, no settings candidates");
  cmd->add_option("--minimize", args->minimize, "'peak' (default) or a POINT: rank by reserved memory there");
  addEditedRunFlags(cmd, &args->edited_run);
  cmd->add_flag("--no-capture-json", args->env.no_capture_json, "ignore X.json beside X.pickle");
  cmd->callback([args, set_result, &out, &err] { set_result(runSweepCmd(*args, out, err)); });
}

}  // namespace reservoir::cli
