// reservoir check TRACE...: the model against the recording, event by event.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <sstream>

#include "commands.h"
#include "common.h"
#include "reservoir/replay/option_text.h"
#include "reservoir/replay/report_json.h"
#include "reservoir/replay/whatif.h"
#include "work_pool.h"

namespace reservoir::cli {
namespace {

struct CheckArgs {
  std::vector<std::string> traces;
  std::optional<std::int64_t> iteration;
  std::string trace;  // the one being checked
  std::optional<std::int64_t> device;
  bool json = false;
  bool expensive = false;
  std::vector<std::string> reset_peaks;
  EnvOptions env;
};

void printHuman(std::ostream& out, const replay::ConformanceReport& r, const std::string& path) {
  out << fmt::format("{} (device {}): {} events, settings \"{}\", fraction {}, device memory {}\n", path, r.device,
                     r.events_total, r.settings, r.fraction, sizeText(static_cast<std::int64_t>(r.total_memory)));
  if (!r.window_complete) out << "  the trace starts mid-run; its start state was rebuilt from the final segments\n";
  if (r.first_divergence) {
    const auto& d = *r.first_divergence;
    out << fmt::format("DIVERGED at event {} of {} ({} events matched before it)\n", d.event_index, r.events_total,
                       r.events_compared);
    out << "  expected   " << d.expected << "\n  simulated  " << d.simulated << "\n  request    " << d.request
        << "\n  stack      " << d.stack << "\n  free blocks of that stream near that size: " << d.pool_state
        << "\n  why        " << d.reason << "\n";
  } else {
    out << fmt::format("events: all {} match (action, address, size, stream)\n", r.events_compared);
  }
  if (!r.first_divergence) {
    if (r.layout_mismatches.empty()) out << "final layout: every segment and block matches the snapshot\n";
    for (const auto& m : r.layout_mismatches)
      out << "layout mismatch: " << m.what << "\n  expected  " << m.expected << "\n  simulated " << m.simulated << "\n";
    if (!r.stats_compared.empty() && r.stats_mismatches.empty())
      out << fmt::format("statistics: {} memory_stats() values equal the capture's\n", r.stats_compared.size());
    for (const auto& m : r.stats_mismatches)
      out << fmt::format("statistics mismatch: {} expected {} simulated {}\n", m.what, m.expected, m.simulated);
  }
  if (!r.invariant_failure.empty()) out << "invariant check failed: " << r.invariant_failure << "\n";
  for (const auto& n : r.notes) out << "note: " << n << "\n";
  out << (r.exact() ? "EXACT\n" : "NOT EXACT\n");
}

// check --settings: the same requests under other settings, compared with the recording as a
// report (not a pass/fail: other settings are expected to make other decisions).
int runSettingsReport(const CheckArgs& a, const replay::Trace& trace, std::size_t dev,
                      const replay::ReplayEnvironment& env, std::ostream& out, std::ostream& err) {
  replay::ReplayEnvironment recorded = env;
  recorded.settings.reset();
  auto prepared = replay::prepareTrace(trace.snapshot, dev, recorded);
  if (!prepared) return fail(err, a.trace + ": " + prepared.message());
  replay::RunSettings rs;
  rs.config = *sim::parseAllocConf(*env.settings);
  rs.fraction = prepared->fraction;
  rs.usable = prepared->derived_capacity;
  rs.compare_with_recording = true;
  const auto run = replay::replayProgram(*prepared, {}, rs);
  const auto& events = trace.snap().devices[dev].events;
  if (a.json) {
    nlohmann::json j = replay::traceNamed(a.trace);
    j.update({
        {"mode", "settings report"},
        {"settings", *env.settings},
        {"recorded_settings", prepared->recorded_config.last_settings},
        {"exact", !run.decision_change.has_value()},
        {"first_difference", run.decision_change ? nlohmann::json(*run.decision_change) : nlohmann::json(nullptr)},
        {"peak_reserved", run.peak_reserved.bytes},
        {"recorded_peak_reserved", prepared->recorded_peak_reserved},
        {"peak_allocated", run.peak_allocated.bytes},
        {"oom", run.oom ? nlohmann::json(run.oom->event) : nlohmann::json(nullptr)}});
    out << j.dump(2) << "\n";
    return kOk;
  }
  out << fmt::format("{}: the recorded requests replayed under \"{}\" (recorded: \"{}\")\n", a.trace, *env.settings,
                     prepared->recorded_config.last_settings);
  out << fmt::format("  peak reserved {} (recorded {}), peak allocated {}\n", sizeText(run.peak_reserved.bytes),
                     sizeText(prepared->recorded_peak_reserved), sizeText(run.peak_allocated.bytes));
  if (run.decision_change)
    out << fmt::format("  the allocator decides differently from event {} on (recorded: {})\n", *run.decision_change,
                       *run.decision_change < events.size()
                           ? replay::describeEvent(*prepared->snapshot, events[*run.decision_change])
                           : "end");
  else
    out << "  every decision is the same as recorded\n";
  if (run.oom) out << fmt::format("  out of memory at event {}\n", run.oom->event);
  out << "  (a report, not a check: run 'reservoir whatif --set' for the full comparison)\n";
  return kOk;
}

// One trace's check; `progress` gets the progress lines, `err` the messages.
int checkOne(const CheckArgs& a, std::ostream& out, std::ostream& err, std::ostream& progress_err) {
  auto opened = openTrace(a.trace, a.device, a.env, progress_err);
  if (!opened) return fail(err, opened.status());
  if (opened->nothing_to_replay) {
    if (a.json) {
      nlohmann::json j = replay::traceNamed(a.trace);
      j["nothing_to_replay"] = *opened->nothing_to_replay;
      out << j.dump(2) << "\n";
    } else {
      out << *opened->nothing_to_replay << "\n";
    }
    return kOk;
  }
  const replay::Trace& trace = opened->trace;
  const std::size_t dev = opened->device;
  const replay::ReplayEnvironment& env = opened->env;
  if (env.settings) return runSettingsReport(a, trace, dev, env, out, err);
  replay::ConformanceOptions opts;
  opts.env = env;
  opts.expensive_checks = a.expensive;
  auto resets = replay::choosePeakResets(trace.snap(), dev, env.capture.get(), a.reset_peaks);
  if (!resets) return fail(err, resets.status(), a.reset_peaks.empty() ? a.trace + ": " : "--reset-peaks: ");
  Progress progress(progress_err, "replaying");
  opts.progress = [&](std::size_t d, std::size_t t) { progress(d, t); };
  auto report = replay::checkRecording(trace.snap(), dev, std::move(opts), *resets);
  if (!report) return fail(err, report.status(), a.trace + ": ");
  if (a.json)
    out << replay::conformanceJson(*report, a.trace).dump(2) << "\n";
  else
    printHuman(out, *report, a.trace);
  return report->exact() ? kOk : kFailed;
}

// One item: the check of trace `i` as it would print alone: {"code", "out", "err"}.
std::string checkItem(CheckArgs a, const std::vector<std::string>& paths, std::size_t i, std::ostream& progress_err) {
  a.trace = paths[i];
  std::ostringstream out, err;
  const int code = checkOne(a, out, err, progress_err);
  return nlohmann::json{{"code", code}, {"out", out.str()}, {"err", err.str()}}.dump();
}

// Several traces: each one's report in order, then one line (text) or {"traces", "exact",
// "not_exact", "unreadable"} (JSON); the exit code is the worst trace's.
int printChecks(const CheckArgs& a, const std::vector<std::string>& paths, const std::vector<std::string>& results,
                std::ostream& out, std::ostream& err) {
  int code = kOk;
  std::size_t exact = 0, not_exact = 0;
  nlohmann::json traces = nlohmann::json::array(), unreadable = nlohmann::json::array();
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto r = nlohmann::json::parse(results[i]);
    const int c = r.contains("error") ? kInternal : r["code"].get<int>();
    const std::string text = r.contains("error")
                                 ? "reservoir: " + paths[i] + ": " + r["error"].get<std::string>() + "\n"
                                 : r["err"].get<std::string>();
    err << text;
    code = worstExitCode(code, c);
    if (c == kOk || c == kFailed) (c == kOk ? exact : not_exact)++;
    if (c != kOk && c != kFailed) {
      nlohmann::json one = replay::traceNamed(paths[i]);
      one["error"] = text.substr(0, text.find_last_not_of('\n') + 1);
      unreadable.push_back(std::move(one));
    }
    if (a.json && (c == kOk || c == kFailed)) traces.push_back(nlohmann::json::parse(r["out"].get<std::string>()));
    if (!a.json) out << r["out"].get<std::string>();
  }
  if (a.json) {
    nlohmann::json j = replay::checksJson(std::move(traces), exact, not_exact, std::move(unreadable));
    addMpiObject(j);
    out << j.dump(2) << "\n";
  } else {
    out << fmt::format("{} traces: {} exact, {} not exact, {} not read\n", paths.size(), exact, not_exact,
                       paths.size() - exact - not_exact);
  }
  return code;
}

int runCheck(CheckArgs a, std::ostream& out, std::ostream& err) {
  auto paths = expandTraceList(a.traces, a.iteration);
  if (!paths) return fail(err, paths.status());
  WorkPool& pool = workPool();
  // Progress only when this process checks one trace alone; items among others print none.
  std::ostream& progress_err = paths->size() == 1 && pool.processes() == 1 ? err : nullStream();
  const auto results = pool.run(
      fileSizes(*paths), [&](std::size_t i) { return checkItem(a, *paths, i, progress_err); }, 1, err);
  if (!pool.root()) return kOk;
  printMpiSummary(err);
  if (paths->size() > 1) return printChecks(a, *paths, results, out, err);
  const auto r = nlohmann::json::parse(results[0]);
  if (r.contains("error")) return fail(err, r["error"].get<std::string>());
  err << r["err"].get<std::string>();
  const std::string text = r["out"].get<std::string>();
  if (a.json && pool.mpiJson() && r["code"].get<int>() <= kFailed) {
    auto j = nlohmann::json::parse(text);
    addMpiObject(j);
    out << j.dump(2) << "\n";
  } else {
    out << text;
  }
  return r["code"].get<int>();
}

}  // namespace

void registerCheck(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd =
      app.add_subcommand("check", "Replay a trace through the allocator model and compare it event by event");
  cmd->add_option("traces", args->traces,
                  "snapshot pickle(s) (torch.cuda.memory._snapshot(); .gz/.zst too), @LIST (one path a line), a "
                  "glob or a dump folder (its ranks); several: each one's report, then a summary")
      ->required();
  addIterationOption(cmd, &args->iteration);
  cmd->add_option("--device", args->device, "CUDA device number (default: the one with the most events)");
  cmd->add_flag("--json", args->json, "machine-readable output");
  cmd->add_flag("--check", args->expensive, "validate the whole allocator state after every operation (slow)");
  cmd->add_option(
      "--reset-peaks", args->reset_peaks,
      "POINT where the program called torch.cuda.reset_peak_memory_stats() (peaks in the capture count from there)");
  addEnvOptions(cmd, &args->env);
  cmd->callback([args, set_result, &out, &err] { set_result(runCheck(*args, out, err)); });
}

}  // namespace reservoir::cli
