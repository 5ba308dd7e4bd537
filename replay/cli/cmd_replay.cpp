// reservoir replay TRACE --backend torch|cuda|model [edits]: the trace's requests (edited as in
// `reservoir whatif`) executed by a backend, compared with the model's prediction.
// reservoir synth OUT: a synthetic trace recorded by the model (as long as wanted).
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "edit_options.h"
#include "reservoir/replay/backend.h"
#include "reservoir/replay/backend_replay.h"
#include "reservoir/replay/edited_program.h"
#include "reservoir/replay/edited_run.h"
#include "reservoir/replay/output_targets.h"
#include "reservoir/simulator/sizes.h"
#include "reservoir/traces/reader.h"
#include "reservoir/traces/writer.h"

namespace reservoir::cli {
namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void onInterrupt(int) { g_interrupted.store(true); }

// SIGINT/SIGTERM stop a replay between two ops; the backend then gives everything back.
class InterruptGuard {
 public:
  InterruptGuard() {
    g_interrupted.store(false);
    old_int_ = std::signal(SIGINT, onInterrupt);
    old_term_ = std::signal(SIGTERM, onInterrupt);
  }
  ~InterruptGuard() {
    std::signal(SIGINT, old_int_);
    std::signal(SIGTERM, old_term_);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  void (*old_int_)(int) = nullptr;
  void (*old_term_)(int) = nullptr;
};

struct ReplayArgs {
  std::string trace;
  std::vector<std::string> backends;
  std::optional<std::int64_t> device;
  bool json = false;
  bool no_capture_json = false;
  bool no_touch = false;
  bool no_peak_ops = false;
  bool no_baseline = false;
  std::string save_snapshot;
  EditOptions edits;
};

std::string secondsText(double s) {
  if (s < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
  if (s < 1.0) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

double driverSeconds(const replay::BackendTiming& t) { return t.alloc_seconds + t.free_seconds + t.sync_seconds; }

nlohmann::json mismatches(const std::vector<replay::Mismatch>& ms) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& m : ms) a.push_back({{"what", m.what}, {"expected", m.expected}, {"got", m.simulated}});
  return a;
}

nlohmann::json resultJson(const replay::BackendResult& r) {
  nlohmann::json j;
  j["backend"] = r.backend;
  j["peak_reserved"] = r.peak_reserved.bytes;
  j["peak_allocated"] = r.peak_allocated.bytes;
  j["peak_reserved_op"] =
      r.peak_reserved.op == replay::kNoOp ? nlohmann::json(nullptr) : nlohmann::json(r.peak_reserved.op);
  j["final_reserved"] = r.final_reserved;
  j["final_allocated"] = r.final_allocated;
  j["ooms"] = r.ooms;
  j["events"] = r.events.size();
  j["segments"] = r.segments.size();
  j["ops_executed"] = r.ops_executed;
  j["interrupted"] = r.interrupted;
  if (r.stats_known) j["memory_stats"] = sim::memoryStatsMap(r.final_stats);
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& p : r.probes)
    probes.push_back({{"point", p.point}, {"reserved", p.reserved}, {"allocated", p.allocated}});
  j["probes"] = probes;
  const auto& t = r.timing;
  nlohmann::json cleanups = nlohmann::json::array();
  for (const auto& c : t.cleanups)
    cleanups.push_back({{"what", c.what},
                        {"op", c.index},
                        {"released", c.released},
                        {"seconds", c.seconds},
                        {"free_seconds", c.free_seconds},
                        {"sync_seconds", c.sync_seconds},
                        {"driver_frees", c.driver_frees}});
  j["timing"] = {{"wall_seconds", t.wall_seconds},
                 {"bookkeeping_seconds", t.overhead_seconds},
                 {"requests_per_second", t.requests_per_second},
                 {"driver_allocs", t.driver_allocs},
                 {"driver_frees", t.driver_frees},
                 {"alloc_seconds", t.alloc_seconds},
                 {"free_seconds", t.free_seconds},
                 {"sync_seconds", t.sync_seconds},
                 {"cleanups", cleanups}};
  if (r.memory.known) {
    const auto& m = r.memory;
    j["device_memory"] = {{"device", m.device_name},
                          {"total", m.total},
                          {"free_at_start", m.free_at_start},
                          {"outside_cache_at_start", m.outside_at_start},
                          {"measured_at_op", m.measured_at ? nlohmann::json(*m.measured_at) : nlohmann::json(nullptr)},
                          {"reserved_at_measure", m.reserved_at_measure},
                          {"used_at_measure", m.used_at_measure},
                          {"cache_on_device_at_measure", m.seen_at_measure},
                          {"driver_granularity", m.granularity},
                          {"ballast", m.ballast},
                          {"fits", m.fits},
                          {"refused", m.refused},
                          {"driver_failures", m.driver_failures}};
  }
  j["notes"] = r.notes;
  return j;
}

nlohmann::json comparisonJson(const replay::BackendComparison& c) {
  nlohmann::json j;
  j["exact"] = c.exact();
  j["figures_equal"] = c.figuresEqual();
  j["events_compared"] = c.events_compared;
  if (c.first_difference)
    j["first_difference"] = {{"event_index", c.first_difference->index},
                             {"expected", c.first_difference->expected},
                             {"got", c.first_difference->got},
                             {"reason", c.first_difference->reason}};
  else
    j["first_difference"] = nullptr;
  j["layout_mismatches"] = mismatches(c.layout_mismatches);
  j["stats_mismatches"] = mismatches(c.stats_mismatches);
  j["stats_compared"] = c.stats_compared.size();
  j["figure_mismatches"] = mismatches(c.figure_mismatches);
  return j;
}

void printResult(std::ostream& out, const replay::BackendResult& r, const replay::EditedProgram& prog) {
  out << fmt::format("  peak reserved {}, peak allocated {}; final reserved {}, allocated {}\n",
                     sizeText(r.peak_reserved.bytes), sizeText(r.peak_allocated.bytes), sizeText(r.final_reserved),
                     sizeText(r.final_allocated));
  if (r.ooms)
    out << fmt::format("  out of memory: {} failed mallocs (first at op {})\n", r.ooms, r.first_oom.value_or(0));
  for (const auto& p : r.probes)
    out << fmt::format("  probe {}: reserved {}, allocated {}\n", p.point, sizeText(p.reserved), sizeText(p.allocated));
  const auto& t = r.timing;
  out << fmt::format(
      "  time {} for {} requests: {:.0f} requests/s{}\n", secondsText(t.wall_seconds), prog.requests(),
      t.requests_per_second,
      t.overhead_seconds > 0 ? fmt::format(" ({} of bookkeeping left out)", secondsText(t.overhead_seconds)) : "");
  if (t.driver_allocs || t.driver_frees)
    out << fmt::format("  driver: {} allocations{}, {} frees{}{}\n", t.driver_allocs,
                       t.alloc_seconds > 0 ? " in " + secondsText(t.alloc_seconds) : "", t.driver_frees,
                       t.free_seconds > 0 ? " in " + secondsText(t.free_seconds) : "",
                       t.sync_seconds > 0 ? ", synchronizations " + secondsText(t.sync_seconds) : "");
  if (!t.cleanups.empty() && r.backend != "model") {
    double total = 0;
    for (const auto& c : t.cleanups) total += c.seconds;
    out << fmt::format("  empty_cache: {} calls, {} in total\n", t.cleanups.size(), secondsText(total));
    std::size_t shown = 0;
    for (const auto& c : t.cleanups) {
      if (c.what.rfind("recorded", 0) == 0 && shown >= 8) continue;
      ++shown;
      out << fmt::format("    {}: released {} in {}{}\n", c.what, sizeText(c.released), secondsText(c.seconds),
                         c.free_seconds + c.sync_seconds > 0
                             ? fmt::format(" (frees {}, sync {}, {} driver frees)", secondsText(c.free_seconds),
                                           secondsText(c.sync_seconds), c.driver_frees)
                             : "");
    }
  }
  if (r.memory.known) {
    const auto& m = r.memory;
    out << fmt::format("  device {}: {} total, {} outside the cache at start\n", m.device_name,
                       sizeText(static_cast<std::int64_t>(m.total)),
                       sizeText(static_cast<std::int64_t>(m.outside_at_start)));
    if (m.measured_at)
      out << fmt::format(
          "  at the predicted peak (op {}): reserved {}, device used {}, the cache on the device {} "
          "(driver granularity {})\n",
          *m.measured_at, sizeText(m.reserved_at_measure), sizeText(static_cast<std::int64_t>(m.used_at_measure)),
          sizeText(m.seen_at_measure), sizeText(m.granularity));
    if (m.refused || m.driver_failures)
      out << fmt::format("  does not fit: {} driver calls refused (capacity), {} failed\n", m.refused,
                         m.driver_failures);
  }
  for (const auto& n : r.notes) out << "  note: " << n << "\n";
}

void printComparison(std::ostream& out, const replay::BackendComparison& c, const char* what) {
  if (c.exact()) {
    out << fmt::format("  {}: EXACT ({} events, {} statistics, the final layout, peaks and probes)\n", what,
                       c.events_compared, c.stats_compared.size());
    return;
  }
  out << fmt::format("  {}: figures {}, decisions DIFFERENT\n", what, c.figuresEqual() ? "EQUAL" : "DIFFERENT");
  if (c.first_difference)
    out << fmt::format(
        "    first difference at event {} ({} matched before it): {}\n      expected {}\n      got      {}\n",
        c.first_difference->index, c.events_compared, c.first_difference->reason, c.first_difference->expected,
        c.first_difference->got);
  std::size_t shown = 0;
  for (const auto* list : {&c.figure_mismatches, &c.stats_mismatches, &c.layout_mismatches})
    for (const auto& m : *list)
      if (shown++ < 12) out << fmt::format("    {}: expected {}, got {}\n", m.what, m.expected, m.simulated);
}

std::vector<std::string> backendNames(const std::vector<std::string>& args) {
  std::vector<std::string> backends;
  for (const auto& b : args) {
    std::size_t start = 0;
    while (start <= b.size()) {
      const auto comma = b.find(',', start);
      const std::string name = b.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!name.empty()) backends.push_back(name);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return backends;
}

// --save-snapshot: the real allocator's own recording, and what a capture writes beside it (the
// fraction, the device, the final memory_stats).
Status saveRecording(const ReplayArgs& a, const replay::EditedRunChoice& run, const replay::BackendResult& result,
                     const replay::EditedProgram& program) {
  const std::string_view bytes(reinterpret_cast<const char*>(result.snapshot_bytes.data()),
                               result.snapshot_bytes.size());
  if (Status st = traces::writeOutputFile(a.save_snapshot, bytes); !st.ok()) return st;
  nlohmann::json facts = {{"fraction", run.fraction < 1.0 ? run.fraction : 0.0},
                          {"device_total", result.memory.total},
                          {"memory_stats", sim::memoryStatsMap(result.final_stats)},
                          {"config",
                           {{"recorded_by", "reservoir replay --backend torch"},
                            {"trace", a.trace},
                            {"settings", run.config.toConfString()},
                            {"edits", program.edits}}}};
  return traces::writeOutputFile(replay::captureJsonPath(a.save_snapshot), facts.dump(1));
}

// What a command that writes `path` and its capture JSON beside it may not write over: the trace
// it reads (and its capture JSON), or "-" (replay::checkOutputTargets).
Status checkSnapshotOutput(const std::string& trace, const std::string& label, const std::string& path) {
  if (path.empty()) return {};
  std::vector<replay::NamedPath> inputs;
  if (!trace.empty()) inputs.emplace_back("", trace);
  return replay::checkOutputTargets(inputs,
                                    {{label, path}, {label + "'s capture JSON", replay::captureJsonPath(path)}});
}

nlohmann::json ownRecordingJson(const replay::ConformanceReport& o) {
  return {{"exact", o.exact()},
          {"events_compared", o.events_compared},
          {"first_divergence", o.first_divergence ? nlohmann::json({{"event_index", o.first_divergence->event_index},
                                                                    {"expected", o.first_divergence->expected},
                                                                    {"simulated", o.first_divergence->simulated}})
                                                  : nlohmann::json(nullptr)},
          {"stats_compared", o.stats_compared.size()},
          {"stats_mismatches", mismatches(o.stats_mismatches)},
          {"layout_mismatches", mismatches(o.layout_mismatches)}};
}

nlohmann::json runJson(const replay::BackendRun& run) {
  nlohmann::json b = resultJson(run.result);
  b["vs_model"] = comparisonJson(run.vs_model);
  if (run.own_recording) b["model_on_own_recording"] = ownRecordingJson(*run.own_recording);
  if (run.baseline)
    b["baseline"] = {{"driver_seconds", driverSeconds(run.baseline->timing)},
                     {"wall_seconds", run.baseline->timing.wall_seconds},
                     {"driver_allocs", run.baseline->timing.driver_allocs},
                     {"edited_driver_seconds", driverSeconds(run.result.timing)},
                     {"time_price_seconds", driverSeconds(run.result.timing) - driverSeconds(run.baseline->timing)}};
  return b;
}

void printJson(std::ostream& out, const std::string& trace, const replay::PreparedTrace& p,
               const replay::ConformanceReport& verdict,
               const replay::EditedRunChoice& run, const replay::BackendReplayReport& report) {
  const auto& conf = p.conformance;
  const auto& program = report.program;
  nlohmann::json j;
  j["trace"] = trace;
  j["device"] = conf.device;
  j["events"] = conf.events_total;
  j["settings"] = run.config.toConfString();
  j["fraction"] = run.fraction;
  j["capacity"] = run.usable ? nlohmann::json(*run.usable) : nlohmann::json(nullptr);
  j["capacity_source"] = run.capacity_source;
  j["edits"] = program.edits;
  j["program"] = {{"ops", program.ops.size()},
                  {"mallocs", program.mallocs},
                  {"frees", program.frees},
                  {"record_stream_frees", program.deferred_frees},
                  {"empty_cache", program.empty_caches},
                  {"cleanups", program.cleanups},
                  {"streams", program.streams.size()},
                  {"requests", program.requests()}};
  j["model_vs_recording_exact"] = verdict.exact();  // check's verdict, peak resets included
  j["model"] = resultJson(report.model);
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& r : report.runs) arr.push_back(runJson(r));
  j["backends"] = arr;
  j["exact"] = report.exact;
  out << j.dump(2) << "\n";
}

void printRunText(std::ostream& out, const replay::BackendRun& run, const replay::EditedProgram& program) {
  out << fmt::format("{}:\n", run.name);
  printResult(out, run.result, program);
  printComparison(out, run.vs_model, "against the model's prediction (the recording's addresses)");
  if (run.own_recording) {
    const auto& o = *run.own_recording;
    if (o.exact())
      out << fmt::format("  the model on this run's own recording: EXACT ({} events, {} statistics, layout)\n",
                         o.events_compared, o.stats_compared.size());
    else if (o.first_divergence)
      out << fmt::format(
          "  the model on this run's own recording: diverges at event {}\n    expected {}\n    model    {}\n",
          o.first_divergence->event_index, o.first_divergence->expected, o.first_divergence->simulated);
    else
      out << fmt::format("  the model on this run's own recording: {} statistics and {} layout mismatches\n",
                         o.stats_mismatches.size(), o.layout_mismatches.size());
  }
  if (run.baseline) {
    const double base = driverSeconds(run.baseline->timing), edited = driverSeconds(run.result.timing);
    out << fmt::format(
        "  time price of the edits: driver time {} edited against {} unedited ({}{}), {} against {} "
        "driver allocations\n",
        secondsText(edited), secondsText(base), edited >= base ? "+" : "-", secondsText(std::abs(edited - base)),
        run.result.timing.driver_allocs, run.baseline->timing.driver_allocs);
  }
}

std::string modelOnRecordingText(const replay::ConformanceReport& conf) {
  if (conf.first_divergence)
    return fmt::format("diverges at event {} (run 'reservoir check')", conf.first_divergence->event_index);
  if (!conf.layout_mismatches.empty() || !conf.invariant_failure.empty())
    return "the final layout differs (run 'reservoir check')";
  if (!conf.stats_mismatches.empty())
    return fmt::format(
        "every event and the final layout exact; {} memory_stats values differ from the capture's "
        "(e.g. peaks the program reset: 'reservoir check --reset-peaks')",
        conf.stats_mismatches.size());
  return "exact";
}

void printText(std::ostream& out, const std::string& trace, const replay::PreparedTrace& p,
               const replay::ConformanceReport& verdict,
               const replay::EditedRunChoice& run, const replay::BackendReplayReport& report) {
  const auto& conf = p.conformance;
  const auto& program = report.program;
  out << fmt::format(
      "{} (device {}): {} events; {} requests ({} mallocs, {} frees of which {} record_stream'd, {} "
      "empty_cache{}) on {} stream(s)\n",
      trace, conf.device, conf.events_total, program.requests(), program.mallocs, program.frees, program.deferred_frees,
      program.empty_caches, program.cleanups ? fmt::format(", {} inserted by --cleanup", program.cleanups) : "",
      program.streams.size());
  out << fmt::format("settings \"{}\", memory fraction {}, capacity for the cache {} ({})\n", run.config.toConfString(),
                     run.fraction, run.usable ? sizeText(static_cast<std::int64_t>(*run.usable)) : "unlimited",
                     run.capacity_source);
  for (const auto& e : program.edits) out << "edit: " << e << "\n";
  out << fmt::format("the model on the recording: {}\n", modelOnRecordingText(verdict));
  for (const auto& note : verdict.notes)  // where check's verdict adds to the preparation's (peak resets)
    if (std::find(conf.notes.begin(), conf.notes.end(), note) == conf.notes.end()) out << "  note: " << note << "\n";
  out << "model (prediction):\n";
  printResult(out, report.model, program);
  for (const auto& r : report.runs) printRunText(out, r, program);
  out << (report.exact
              ? "EXACT (every figure equals the prediction; the model reproduces each real run's own recording)\n"
              : "DIFFERENT\n");
}

// The progress of each stage of the job, one line at a time on a terminal.
class StageProgress {
 public:
  explicit StageProgress(std::ostream& err) : err_(err) {}
  void operator()(const std::string& stage, std::size_t done, std::size_t total) {
    if (!current_ || stage != stage_) {
      current_.reset();
      stage_ = stage;
      current_.emplace(err_, stage);
    }
    (*current_)(done, total);
  }

 private:
  std::ostream& err_;
  std::string stage_;
  std::optional<Progress> current_;
};

int runReplay(const ReplayArgs& a, std::ostream& out, std::ostream& err) {
  if (Status st = checkSnapshotOutput(a.trace, "--save-snapshot", a.save_snapshot); !st.ok()) return fail(err, st);
  auto w = makeWhatIfOptions(a.edits);
  if (!w) return usage(err, w.message());
  std::vector<std::unique_ptr<replay::ReplayBackend>> impls;
  for (const auto& name : backendNames(a.backends)) {
    auto b = replay::makeBackend(name);
    if (!b) return fail(err, b.status());
    impls.push_back(std::move(*b));
  }
  EnvOptions env_opts;
  env_opts.no_capture_json = a.no_capture_json;
  auto opened = openTrace(a.trace, a.device, env_opts, err);
  if (!opened) return fail(err, opened.status());
  replay::ReplayEnvironment& env = opened->env;
  env = replay::editedRunEnvironment(env, *w);
  auto prepared = [&] {
    Progress progress(err, "preparing " + a.trace);
    return replay::prepareTrace(opened->trace.snapshot, opened->device, env);
  }();
  if (!prepared) return fail(err, a.trace + ": " + prepared.message());
  const replay::PreparedTrace& p = *prepared;
  auto edits = replay::resolveEdits(p, w->edits);
  if (!edits) return fail(err, edits.status());
  auto run = replay::chooseEditedRunAsWhatIf(p, *w);
  if (!run) return fail(err, run.status());

  InterruptGuard guard;
  std::optional<StageProgress> progress{std::in_place, err};
  replay::BackendReplayOptions o;
  o.touch_memory = !a.no_touch;
  o.track_peaks = !a.no_peak_ops;
  o.baseline = !a.no_baseline;
  o.cancel = &g_interrupted;
  o.progress = [&](const std::string& stage, std::size_t d, std::size_t n) { (*progress)(stage, d, n); };
  Status saved;
  if (!a.save_snapshot.empty())
    o.on_recording = [&](const replay::BackendResult& r, const replay::EditedProgram& prog) {
      saved = saveRecording(a, *run, r, prog);
    };
  auto report = replay::runBackendReplay(p, *edits, *run, impls, o);
  progress.reset();
  if (!report) return fail(err, report.status());
  if (!saved.ok()) return fail(err, saved, "--save-snapshot: ");
  auto verdict = replay::recordingVerdict(p, env);  // the rule check uses, peak resets included
  if (!verdict) return fail(err, a.trace + ": " + verdict.message());
  if (a.json)
    printJson(out, a.trace, p, *verdict, *run, *report);
  else
    printText(out, a.trace, p, *verdict, *run, *report);
  return report->exact ? kOk : kFailed;
}

struct SynthArgs {
  std::string out;
  std::size_t events = 1'000'000;
  std::uint64_t seed = 1;
  std::string settings;
  std::string budget = "24GiB";
  std::size_t empty_cache_every = 50'000;
  std::size_t step_requests = 0;
};

int runSynth(const SynthArgs& a, std::ostream& out, std::ostream& err) {
  if (Status st = checkSnapshotOutput("", "the snapshot", a.out); !st.ok()) return fail(err, st);
  replay::SynthOptions o;
  o.events = a.events;
  o.seed = a.seed;
  o.settings = a.settings;
  o.empty_cache_every = a.empty_cache_every;
  o.step_requests = a.step_requests;
  auto budget = sim::parseSize(a.budget);
  if (!budget) return usage(err, "--budget: not a size: '" + a.budget + "'");
  o.budget = *budget;
  auto trace = replay::synthesizeTrace(o);
  if (!trace) return fail(err, trace.status());
  traces::WriteOptions wo;
  if (a.out.ends_with(".zst")) wo.compression = traces::Compression::kZstd;
  if (a.out.ends_with(".gz")) wo.compression = traces::Compression::kGzip;
  if (Status st = traces::writeSnapshotFile(trace->snapshot, a.out, wo); !st.ok()) return fail(err, st);
  // What a capture writes beside its snapshot: the final memory_stats, for `check` and `replay`.
  const std::string json_path = replay::captureJsonPath(a.out);
  nlohmann::json j;
  j["fraction"] = 0;
  j["device_total"] = o.total_memory;
  j["memory_stats"] = sim::memoryStatsMap(trace->final_stats);
  j["config"] = {{"synthetic", true}, {"seed", a.seed}, {"settings", a.settings}, {"requests", trace->requests}};
  if (Status st = traces::writeOutputFile(json_path, j.dump(1)); !st.ok()) return fail(err, st);
  out << fmt::format("{}: {} events from {} requests (seed {}, settings \"{}\"), peak reserved {}; {}\n", a.out,
                     trace->snapshot.devices[0].events.size(), trace->requests, a.seed, a.settings,
                     sizeText(trace->final_stats.reserved_bytes[sim::kAggregate].peak), json_path);
  return kOk;
}

}  // namespace

void registerReplay(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err) {
  auto args = std::make_shared<ReplayArgs>();
  CLI::App* cmd = app.add_subcommand(
      "replay",
      "Execute a trace's requests (edited as in whatif) on a backend: the real allocator (torch), the driver "
      "(cuda) or the model, and compare with the model's prediction");
  cmd->add_option("trace", args->trace, "snapshot pickle")->required();
  cmd->add_option("--backend", args->backends, "torch, cuda or model (repeatable, or comma-separated)")->required();
  cmd->add_option("--device", args->device, "the trace's CUDA device number (default: the one with the most events)");
  cmd->add_flag("--json", args->json, "machine-readable output");
  cmd->add_flag("--no-capture-json", args->no_capture_json, "ignore X.json beside X.pickle");
  cmd->add_option("--save-snapshot", args->save_snapshot, "torch: write the real allocator's own recording here");
  cmd->add_flag("--no-touch", args->no_touch, "cuda: do not write new memory");
  cmd->add_flag("--no-peak-ops", args->no_peak_ops,
                "torch: do not read the statistics after every op (peaks from the allocator)");
  cmd->add_flag("--no-baseline", args->no_baseline, "cuda: skip the unedited run that prices the edits");
  addEditOptions(cmd, &args->edits);
  cmd->callback([args, set_result, &out, &err] { set_result(runReplay(*args, out, err)); });

  auto sargs = std::make_shared<SynthArgs>();
  CLI::App* synth = app.add_subcommand("synth",
                                       "Write a synthetic trace recorded by the model (two streams, "
                                       "record_stream frees, periodic empty_cache), with X.json beside it");
  synth->add_option("out", sargs->out, "the snapshot to write (.pickle, .pickle.gz, .pickle.zst)")->required();
  synth->add_option("--events", sargs->events, "at least this many trace entries (default 1000000)");
  synth->add_option("--seed", sargs->seed, "random seed (default 1)");
  synth->add_option("--settings", sargs->settings, "PYTORCH_CUDA_ALLOC_CONF it is recorded with");
  synth->add_option("--budget", sargs->budget, "live bytes stay under this (default 24GiB)");
  synth->add_option("--empty-cache-every", sargs->empty_cache_every, "requests between empty_cache calls (0: never)");
  synth->add_option("--step-requests", sargs->step_requests,
                    "training steps of this many requests that repeat the first (stacks name the step and its "
                    "phase; 0: none, the default)");
  synth->callback([sargs, set_result, &out, &err] { set_result(runSynth(*sargs, out, err)); });
}

}  // namespace reservoir::cli
