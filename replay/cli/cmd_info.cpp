// reservoir info TRACE: what a snapshot holds, per device.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "reservoir/replay/summary.h"
#include "reservoir/simulator/alloc_config.h"
#include "reservoir/simulator/sizes.h"

namespace reservoir::cli {
namespace {

struct InfoArgs {
  std::string trace;
  std::optional<std::int64_t> device;
  bool json = false;
  EnvOptions env;
};

nlohmann::json peakJson(const traces::Snapshot& snap, const replay::PeakPoint& p) {
  if (!p.known) return nullptr;
  return {{"bytes", p.bytes},
          {"event_index", p.event_index},
          {"time_us", p.time_us},
          {"stack", replay::describeStack(snap, p.stack, 6)}};
}

nlohmann::json deviceJson(const traces::Snapshot& snap, const replay::DeviceSummary& s) {
  nlohmann::json actions = nlohmann::json::object();
  for (std::size_t a = 0; a < traces::kActionCount; ++a)
    if (s.actions[a]) actions[std::string(traces::actionName(static_cast<traces::Action>(a)))] = s.actions[a];
  nlohmann::json j = {
      {"device", s.device},
      {"events", s.events},
      {"actions", actions},
      {"first_time_us", s.first_time_us},
      {"last_time_us", s.last_time_us},
      {"complete", s.complete},
      {"start_reserved", s.start_reserved},
      {"peak_reserved", s.peak_reserved.bytes},
      {"peak_reserved_at", peakJson(snap, s.peak_reserved)},
      {"peak_allocated", s.peak_allocated.known ? nlohmann::json(s.peak_allocated.bytes) : nlohmann::json(nullptr)},
      {"peak_allocated_at", peakJson(snap, s.peak_allocated)},
      {"annotations", s.annotations}};
  if (!s.peak_allocated_note.empty()) j["peak_allocated_note"] = s.peak_allocated_note;
  const auto& f = s.final_state;
  j["final"] = {{"reserved", f.reserved},
                {"allocated", f.allocated},
                {"active", f.active},
                {"requested", f.requested},
                {"segments", f.segments},
                {"blocks", f.blocks},
                {"blocks_by_state", f.blocks_by_state}};
  return j;
}

nlohmann::json settingsJson(const traces::RecordedSettings& s) {
  nlohmann::json j = {{"PYTORCH_CUDA_ALLOC_CONF", s.alloc_conf},
                      {"max_split_size", s.max_split_size},
                      {"garbage_collection_threshold", s.garbage_collection_threshold},
                      {"expandable_segments", s.expandable_segments},
                      {"roundup_power2_divisions", s.roundup_power2_divisions},
                      {"recorded", s.present}};
  for (const auto& [k, v] : s.other) j["other"][k] = v;
  return j;
}

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

int runInfo(const InfoArgs& a, std::ostream& out, std::ostream& err) {
  auto trace = loadTrace(a.trace, err, !a.env.no_capture_json);
  if (!trace) return fail(err, trace.message());
  const traces::Snapshot& snap = trace->snapshot;
  auto env = makeEnvironment(a.env, *trace);
  if (!env) return fail(err, env.message());
  std::vector<std::size_t> devices;
  if (a.device) {
    auto d = chooseDevice(snap, a.device);
    if (!d) return fail(err, d.message());
    devices.push_back(*d);
  } else {
    const std::size_t busiest = snap.devices.empty() ? 0 : snap.busiestDevice();  // once: linear, not quadratic
    for (std::size_t i = 0; i < snap.devices.size(); ++i)
      if (!snap.devices[i].events.empty() || i == busiest) devices.push_back(i);
  }
  std::vector<replay::DeviceSummary> sums;
  for (std::size_t d : devices) sums.push_back(replay::summarizeDevice(snap, d, *env));
  const auto total = replay::finalState(snap, std::nullopt);
  if (a.json) {
    nlohmann::json j;
    j["trace"] = a.trace;
    j["pickle_protocol"] = snap.pickle_protocol;
    j["compression"] = std::string(traces::compressionName(snap.compression));
    j["file_bytes"] = snap.file_bytes;
    j["default_device"] = snap.devices.empty() ? -1 : snap.devices[snap.busiestDevice()].device;
    j["devices"] = nlohmann::json::array();
    for (const auto& s : sums) j["devices"].push_back(deviceJson(snap, s));
    j["segments"] = total.segments;
    j["blocks"] = total.blocks;
    j["final"] = {{"reserved", total.reserved},
                  {"allocated", total.allocated},
                  {"active", total.active},
                  {"requested", total.requested}};
    j["allocator_settings"] = settingsJson(snap.settings);
    j["annotations"] = snap.annotations.size();
    j["frames"] = snap.frames.size();
    j["stacks"] = snap.stackCount();
    nlohmann::json anomalies = nlohmann::json::object();
    for (std::size_t i = 0; i < traces::AnomalyCounters::kCount; ++i) {
      const auto an = static_cast<traces::Anomaly>(i);
      if (snap.anomalies.count(an)) anomalies[std::string(traces::anomalyInfo(an).name)] = snap.anomalies.count(an);
    }
    j["anomalies"] = anomalies;
    out << j.dump(2) << "\n";
    return kOk;
  }
  out << fmt::format("{}: pickle protocol {}{}, {} devices, {} frames, {} stacks\n", a.trace, snap.pickle_protocol,
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

}  // namespace

void registerInfo(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd = app.add_subcommand("info", "Summarise a snapshot: events, peaks, final state, settings");
  cmd->add_option("trace", args->trace, "snapshot pickle (torch.cuda.memory._snapshot(); .gz/.zst too)")->required();
  cmd->add_option("--device", args->device, "CUDA device number (default: every device with events)");
  cmd->add_flag("--json", args->json, "machine-readable output");
  addEnvOptions(cmd, &args->env);
  cmd->callback([args, set_result, &out, &err] { set_result(runInfo(*args, out, err)); });
}

}  // namespace reservoir::cli
