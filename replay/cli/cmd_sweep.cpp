// reservoir sweep TRACE: where should empty_cache go (and which settings help)?
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <thread>

#include "commands.h"
#include "common.h"
#include "edit_options.h"
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
  const LoadedTrace& trace = *opened->trace;
  const std::size_t dev = opened->device;
  replay::SweepOptions o;
  static_cast<replay::EditedRunOptions&>(o) = std::move(*edited_run);
  o.max_candidates = a.max_candidates;
  o.jobs = *jobs;
  o.try_settings = !a.no_settings;
  if (!a.minimize.empty() && a.minimize != "peak") {
    auto p = replay::parsePoint(a.minimize);
    if (!p) return usage(err, "--minimize: " + p.message());
    o.minimize_at = *p;
  }
  auto prepared = replay::prepareTrace(trace.snapshot, dev, replay::editedRunEnvironment(opened->env, o));
  if (!prepared) return fail(err, a.trace + ": " + prepared.message());
  Progress progress(err, "sweeping");
  o.progress = [&](std::size_t d, std::size_t t) { progress(d, t); };
  auto rep = replay::runSweep(*prepared, o);
  if (!rep) return fail(err, rep.status(), a.trace + ": ");
  if (a.json) {
    nlohmann::json j;
    j["trace"] = a.trace;
    j["objective"] = rep->objective;
    j["baseline_peak_reserved"] = rep->baseline_peak_reserved;
    j["baseline_peak_allocated"] = rep->baseline_peak_allocated;
    if (rep->baseline_reserved_at_point) j["baseline_reserved_at_point"] = *rep->baseline_reserved_at_point;
    j["evaluated"] = rep->evaluated;
    j["seconds"] = rep->seconds;
    j["candidates"] = nlohmann::json::array();
    for (std::size_t i = 0; i < rep->candidates.size() && i < a.top; ++i) {
      const auto& c = rep->candidates[i];
      nlohmann::json cj = {{"edits", c.edits},
                           {"description", c.description},
                           {"peak_reserved", c.peak_reserved},
                           {"peak_allocated", c.peak_allocated},
                           {"saving", c.saving},
                           {"empty_cache_calls", c.empty_cache_calls},
                           {"oom", c.oom}};
      if (c.reserved_at_point) cj["reserved_at_point"] = *c.reserved_at_point;
      j["candidates"].push_back(cj);
    }
    out << j.dump(2) << "\n";
    return kOk;
  }
  out << fmt::format("{}: {} candidates in {:.2f} s, ranked by {} (then by empty_cache calls)\n", a.trace,
                     rep->evaluated, rep->seconds, rep->objective);
  out << fmt::format(
      "baseline: peak reserved {}{}\n", sizeText(rep->baseline_peak_reserved),
      rep->baseline_reserved_at_point ? ", " + rep->objective + " " + sizeText(*rep->baseline_reserved_at_point) : "");
  for (std::size_t i = 0; i < rep->candidates.size() && i < a.top; ++i) {
    const auto& c = rep->candidates[i];
    out << fmt::format(
        "{:>3}. saves {:>12}  peak reserved {:>12}{}  {} empty_cache call(s){}\n     {}\n     {}\n", i + 1,
        sim::formatSize(static_cast<std::uint64_t>(std::max<std::int64_t>(c.saving, 0))),
        sim::formatSize(static_cast<std::uint64_t>(c.peak_reserved)),
        c.reserved_at_point
            ? fmt::format("  at point {:>12}", sim::formatSize(static_cast<std::uint64_t>(*c.reserved_at_point)))
            : "",
        c.empty_cache_calls, c.oom ? "  (OOM!)" : "", flagsText(c.edits), c.description);
  }
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
  cmd->add_option("--minimize", args->minimize, "'peak' (default) or a POINT: rank by reserved memory there");
  addEditedRunFlags(cmd, &args->edited_run);
  cmd->add_flag("--no-capture-json", args->env.no_capture_json, "ignore X.json beside X.pickle");
  cmd->callback([args, set_result, &out, &err] { set_result(runSweepCmd(*args, out, err)); });
}

}  // namespace reservoir::cli
