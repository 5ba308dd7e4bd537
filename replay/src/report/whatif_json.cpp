// The what-if report as JSON (the keys `reservoir whatif --json` prints and the Python package returns).
#include "reservoir/replay/report_json.h"

#include <algorithm>

#include "reservoir/replay/peak_explain.h"
#include "reservoir/replay/report_text.h"

namespace reservoir::replay {

namespace {

nlohmann::json peakJson(const traces::Snapshot& snap, const PeakInfo& p) {
  if (p.op == kNoOp) return nullptr;
  return {
      {"bytes", p.bytes}, {"event_index", p.event}, {"time_us", p.time_us}, {"stack", describeStack(snap, p.stack, 6)}};
}

}  // namespace

nlohmann::json cachePinsJson(const traces::Snapshot& snap, const CachePins& p) {
  nlohmann::json segments = nlohmann::json::array();
  for (const auto& ps : p.segments) {
    nlohmann::json live = nlohmann::json::array();
    for (const auto& [size, stack] : ps.live_blocks)
      live.push_back({{"size", size}, {"stack", describeStack(snap, stack, 5)}});
    segments.push_back({{"address", ps.address},
                        {"size", ps.size},
                        {"free_bytes", ps.free_bytes},
                        {"live_count", ps.live_count},
                        {"live_bytes", ps.live_bytes},
                        {"live_blocks", live}});
  }
  nlohmann::json stacks = nlohmann::json::array();
  for (const auto& s : p.stacks)
    stacks.push_back({{"stack", describeStack(snap, s.stack, 5)},
                      {"blocks", s.blocks},
                      {"segments", s.segments},
                      {"live_bytes", s.live_bytes},
                      {"pinned_bytes", s.pinned_bytes}});
  return {{"reserved", p.reserved},
          {"allocated", p.allocated},
          {"cached", p.cached},
          {"releasable_by_empty_cache", p.releasable},
          {"pinned", p.pinned},
          {"pinned_free", p.pinned_free},
          {"unattributed", p.unattributed},
          {"pinned_segment_count", p.pinned_segments},
          {"pinned_segments", segments},
          {"pinning_stack_count", p.pinning_stacks},
          {"pinning_stacks", stacks}};
}

// Reserved just after each cleanup and release (the first time its point is reached; in the
// baseline, at the same point): absent without such edits.
void addEditFigures(nlohmann::json& j, const RunResult& r) {
  if (r.at_edits.empty()) return;
  j["at_edits"] = nlohmann::json::array();
  for (std::size_t i = 0; i < r.at_edits.size(); ++i) {
    const auto& f = r.at_edits[i];
    const bool first = std::none_of(r.at_edits.begin(), r.at_edits.begin() + static_cast<std::ptrdiff_t>(i),
                                    [&](const EditFigure& g) { return g.kind == f.kind && g.text == f.text; });
    if (!first) continue;
    j["at_edits"].push_back({{"kind", std::string(editKindName(f.kind))},
                             {"edit", f.text},
                             {"point", f.point},
                             {"reserved", f.reserved},
                             {"allocated", f.allocated}});
  }
}

nlohmann::json runJson(const traces::Snapshot& snap, const RunResult& r) {
  nlohmann::json j;
  j["peak_reserved"] = r.peak_reserved.bytes;
  j["peak_allocated"] = r.peak_allocated.bytes;
  j["peak_reserved_at"] = peakJson(snap, r.peak_reserved);
  j["peak_allocated_at"] = peakJson(snap, r.peak_allocated);
  j["final_reserved"] = r.final_reserved;
  j["final_allocated"] = r.final_allocated;
  j["fragmentation"] = r.peak_reserved.bytes
                           ? static_cast<double>(r.peak_allocated.bytes) / static_cast<double>(r.peak_reserved.bytes)
                           : 1.0;
  j["empty_cache_calls"] = r.empty_cache_calls;
  j["probes"] = nlohmann::json::object();
  for (const auto& p : r.probes)
    j["probes"][p.point] = {{"reserved", p.reserved}, {"allocated", p.allocated}, {"active", p.active}};
  addEditFigures(j, r);
  if (r.oom)
    j["oom"] = {{"event_index", r.oom->event},
                {"size", r.oom->size},
                {"stream", r.oom->stream},
                {"count", r.oom->count},
                {"request_index", r.oom->request},
                {"reserved_after", r.oom->reserved_after},
                {"allocated_after", r.oom->allocated_after},
                {"stack", describeStack(snap, r.oom->stack, 8)}};
  else
    j["oom"] = nullptr;
  if (!r.demands.empty()) {
    j["demand"] = {{"fits", r.demands[0].fits},
                   {"free", r.demands[0].free},
                   {"bytes", r.demands[0].bytes},
                   {"capacity_known", r.demands[0].capacity_known}};
    j["demands"] = nlohmann::json::array();
    for (const auto& d : r.demands)
      j["demands"].push_back({{"point", d.text}, {"fits", d.fits}, {"free", d.free}, {"bytes", d.bytes}});
  }
  if (r.at_peak) j["at_peak"] = cachePinsJson(snap, cachePins(*r.at_peak));
  if (!r.invariant_failure.empty()) j["invariant_failure"] = r.invariant_failure;
  return j;
}

nlohmann::json whatIfJson(const traces::Snapshot& snap, const WhatIfReport& rep, const std::string& path) {
  nlohmann::json j;
  j["verdict"] = whatIfVerdict(rep);
  nameTrace(j, path);
  j["device"] = snap.devices[rep.device_index].device;
  j["baseline"] = runJson(snap, rep.baseline);
  j["whatif"] = runJson(snap, rep.whatif);
  j["baseline"]["address_drift"] = rep.baseline.address_drift;
  j["baseline"]["decision_change_at"] =
      rep.baseline.decision_change ? nlohmann::json(*rep.baseline.decision_change) : nlohmann::json(nullptr);
  j["recorded_peak_reserved"] = rep.recorded_peak_reserved;
  j["baseline_matches_recording"] = rep.baseline_matches_recording;
  j["model_exact"] = rep.conformance.exact();
  j["saving"] = rep.baseline.peak_reserved.bytes - rep.whatif.peak_reserved.bytes;
  j["settings"] = {{"baseline", rep.settings_baseline}, {"whatif", rep.settings_whatif}};
  j["capacity"] = rep.capacity ? nlohmann::json(*rep.capacity) : nlohmann::json(nullptr);
  j["capacity_source"] = rep.capacity_source;
  j["notes"] = rep.notes;
  return j;
}

void MaxOverTraces::include(std::int64_t baseline_peak, std::int64_t whatif_peak) {
  baseline_peak_reserved = std::max(baseline_peak_reserved, baseline_peak);
  whatif_peak_reserved = std::max(whatif_peak_reserved, whatif_peak);
}

MaxOverTraces maxOverTraces(const std::vector<RankWhatIf>& ranks) {
  MaxOverTraces m;
  for (const auto& r : ranks) m.include(r.report.baseline.peak_reserved.bytes, r.report.whatif.peak_reserved.bytes);
  return m;
}

nlohmann::json whatIfJson(const std::vector<RankWhatIf>& ranks) {
  std::vector<nlohmann::json> per_trace;
  for (const auto& r : ranks) per_trace.push_back(whatIfJson(r.trace.snap(), r.report, r.trace.path));
  return whatIfJson(std::move(per_trace), maxOverTraces(ranks));
}

nlohmann::json whatIfJson(std::vector<nlohmann::json> per_trace, const MaxOverTraces& m) {
  if (per_trace.size() == 1) return std::move(per_trace[0]);
  nlohmann::json j;
  j["traces"] = std::move(per_trace);
  j["max_over_traces"] = {{"baseline_peak_reserved", m.baseline_peak_reserved},
                          {"whatif_peak_reserved", m.whatif_peak_reserved}};
  return j;
}

}  // namespace reservoir::replay
