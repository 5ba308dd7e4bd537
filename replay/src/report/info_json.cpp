// A snapshot's summary as JSON (`reservoir info --json`).
#include "reservoir/replay/report_json.h"

namespace reservoir::replay {

namespace {

nlohmann::json summaryPeakJson(const traces::Snapshot& snap, const PeakPoint& p) {
  if (!p.known) return nullptr;
  return {{"bytes", p.bytes},
          {"event_index", p.event_index},
          {"time_us", p.time_us},
          {"stack", describeStack(snap, p.stack, 6)}};
}

nlohmann::json deviceJson(const traces::Snapshot& snap, const DeviceSummary& s) {
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
      {"peak_reserved_at", summaryPeakJson(snap, s.peak_reserved)},
      {"peak_allocated", s.peak_allocated.known ? nlohmann::json(s.peak_allocated.bytes) : nlohmann::json(nullptr)},
      {"peak_allocated_at", summaryPeakJson(snap, s.peak_allocated)},
      {"annotations", s.annotations}};
  if (!s.peak_allocated_note.empty()) j["peak_allocated_note"] = s.peak_allocated_note;
  // Which facts the conformance replay gives, whether it ran, and the input that asks for it.
  j["conformance_replay"] = {{"run", s.modelled},
                             {"facts", kModelledFacts},
                             {"input", inputName(Input::kPeakAllocated)}};
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

}  // namespace

nlohmann::json infoJson(const traces::Snapshot& snap, const std::string& path, const std::vector<DeviceSummary>& sums) {
  const auto total = finalState(snap, std::nullopt);
  nlohmann::json j;
  nameTrace(j, path);
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
  return j;
}

}  // namespace reservoir::replay
