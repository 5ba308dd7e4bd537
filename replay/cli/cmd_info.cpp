// reservoir info TRACE...: what a snapshot holds, per device (a folder: each rank's).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "reservoir/replay/option_text.h"
#include "reservoir/replay/report_json.h"
#include "reservoir/replay/summary.h"
#include "reservoir/simulator/alloc_config.h"
#include "reservoir/simulator/sizes.h"
#include "work_pool.h"

namespace reservoir::cli {
namespace {

struct InfoArgs {
  std::vector<std::string> traces;
  std::optional<std::int64_t> iteration;
  bool peak_allocated = false;
  std::optional<std::int64_t> device;
  bool json = false;
  EnvOptions env;
};

void printDevice(std::ostream& out, const traces::Snapshot& snap, const replay::DeviceSummary& s) {
  out << fmt::format("device {}: {} events{}\n", s.device, s.events,
                     s.complete ? " (complete: starts from an empty allocator)" : " (truncated: starts mid-run)");
  std::string acts;
  for (std::size_t a = 0; a < traces::kActionCount; ++a)
    if (s.actions[a])
      acts += fmt::format("{}{} {}", acts.empty() ? "" : ", ", s.actions[a],
                          traces::actionName(static_cast<traces::Action>(a)));
  out << "  actions:         " << acts << "\n";
  if (s.events && s.last_time_us >= s.first_time_us)
    out << fmt::format("  time span:       {:.3f} s\n", static_cast<double>(s.last_time_us - s.first_time_us) / 1e6);
  else if (s.events)
    out << "  time span:       unknown: the last entry's time_us is before the first's (see time_goes_backwards)\n";
  if (!s.complete) out << "  reserved at first event: " << sizeText(s.start_reserved) << "\n";
  out << "  peak reserved:   " << sizeText(s.peak_reserved.bytes);
  if (s.peak_reserved.known && s.events)
    out << fmt::format(" at event {}\n    stack: {}\n", s.peak_reserved.event_index,
                       replay::describeStack(snap, s.peak_reserved.stack, 5));
  else
    out << "\n";
  if (s.peak_allocated.known)
    out << "  peak allocated:  " << sizeText(s.peak_allocated.bytes)
        << fmt::format(" at event {}\n    stack: {}\n", s.peak_allocated.event_index,
                       replay::describeStack(snap, s.peak_allocated.stack, 5));
  if (!s.peak_allocated_note.empty()) out << "  peak allocated:  " << s.peak_allocated_note << "\n";
  const auto& f = s.final_state;
  out << fmt::format(
      "  at the end:      reserved {}, allocated {}, active {}, requested {}\n",
      sim::formatSize(static_cast<std::uint64_t>(f.reserved)), sim::formatSize(static_cast<std::uint64_t>(f.allocated)),
      sim::formatSize(static_cast<std::uint64_t>(f.active)), sim::formatSize(static_cast<std::uint64_t>(f.requested)));
  std::string states;
  for (const auto& [k, v] : f.blocks_by_state) states += fmt::format("{}{} {}", states.empty() ? "" : ", ", v, k);
  out << fmt::format("  segments:        {} ({} expandable), {} blocks: {}\n", f.segments, f.expandable_segments,
                     f.blocks, states);
  out << fmt::format("  annotations:     {}\n", s.annotations);
}

// One trace's summary: its JSON into `json` (when asked for JSON), else its text on `out`.
int infoOne(const InfoArgs& a, const std::string& path, std::ostream& out, std::ostream& err, nlohmann::json* json) {
  auto trace = loadTrace(path, err, !a.env.no_capture_json);
  if (!trace) return fail(err, trace.status());
  const traces::Snapshot& snap = trace->snap();
  auto env = makeEnvironment(a.env, *trace);
  if (!env) return fail(err, env.status());
  auto devices = replay::summaryDevices(snap, a.device);
  if (!devices) return fail(err, devices.status());
  std::vector<replay::DeviceSummary> sums;
  replay::SummaryOptions options;
  options.model_allocated_peak = a.peak_allocated;
  for (std::size_t d : *devices) sums.push_back(replay::summarizeDevice(snap, d, *env, options));
  if (json) {
    *json = replay::infoJson(snap, path, sums);
    return kOk;
  }
  out << fmt::format("{}: pickle protocol {}{}, {} devices, {} frames, {} stacks\n", path, snap.pickle_protocol,
                     snap.compression == traces::Compression::kNone
                         ? ""
                         : fmt::format(" ({})", traces::compressionName(snap.compression)),
                     snap.devices.size(), snap.frames.size(), snap.stackCount());
  out << fmt::format("allocator settings: \"{}\" (expandable_segments {}, max_split_size {}, gc threshold {})\n",
                     snap.settings.alloc_conf, snap.settings.expandable_segments ? "True" : "False",
                     snap.settings.max_split_size < 0
                         ? std::string("unlimited")
                         : sim::formatSize(static_cast<std::uint64_t>(snap.settings.max_split_size)),
                     snap.settings.garbage_collection_threshold);
  for (const auto& s : sums) printDevice(out, snap, s);
  for (std::size_t i = 0; i < traces::AnomalyCounters::kCount; ++i) {
    const auto an = static_cast<traces::Anomaly>(i);
    if (snap.anomalies.count(an))
      out << fmt::format("anomaly ({}): {} x {}\n", traces::severityName(traces::anomalyInfo(an).severity),
                         snap.anomalies.count(an), traces::anomalyInfo(an).description);
  }
  return kOk;
}

// Each trace in turn; JSON: one trace's object, several {"traces": [...]} (those read). The
// worst exit code.
int runInfo(const InfoArgs& a, std::ostream& out, std::ostream& err) {
  auto paths = expandTraceList(a.traces, a.iteration);
  if (!paths) return fail(err, paths.status());
  int code = kOk;
  nlohmann::json all = nlohmann::json::array();
  for (const auto& path : *paths) {
    nlohmann::json one;
    code = worstExitCode(code, infoOne(a, path, out, err, a.json ? &one : nullptr));
    if (a.json && !one.is_null()) all.push_back(std::move(one));
  }
  if (a.json && !all.empty()) out << (paths->size() == 1 ? all[0] : nlohmann::json{{"traces", all}}).dump(2) << "\n";
  return code;
}

}  // namespace

void registerInfo(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd = app.add_subcommand("info", "Summarise a snapshot: events, peaks, final state, settings");
  cmd->add_option("traces", args->traces,
                  "snapshot pickle(s) (torch.cuda.memory._snapshot(); .gz/.zst too), @LIST, a glob or a dump folder "
                  "(its ranks)")
      ->required();
  addIterationOption(cmd, &args->iteration);
  cmd->add_flag("--peak-allocated", args->peak_allocated,
                "also the allocated peak, from the conformance replay (the longest part: left out by default)");
  cmd->add_option("--device", args->device, "CUDA device number (default: every device with events)");
  cmd->add_flag("--json", args->json, "machine-readable output");
  addEnvOptions(cmd, &args->env);
  cmd->callback([args, set_result, &out, &err] { set_result(runInfo(*args, out, err)); });
}

}  // namespace reservoir::cli
