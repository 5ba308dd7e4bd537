#include "whatif_output.h"

#include <fmt/format.h>

#include "common.h"
#include "reservoir/replay/report_text.h"
#include "reservoir/simulator/sizes.h"

namespace reservoir::cli {
namespace {

nlohmann::json peakJson(const traces::Snapshot& snap, const replay::PeakInfo& p) {
  if (p.op == replay::kNoOp) return nullptr;
  return {{"bytes", p.bytes},
          {"event_index", p.event},
          {"time_us", p.time_us},
          {"stack", replay::describeStack(snap, p.stack, 6)}};
}

}  // namespace

nlohmann::json runJson(const traces::Snapshot& snap, const replay::RunResult& r) {
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
  if (r.oom)
    j["oom"] = {{"event_index", r.oom->event},
                {"size", r.oom->size},
                {"stream", r.oom->stream},
                {"count", r.oom->count},
                {"stack", replay::describeStack(snap, r.oom->stack, 8)}};
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
  if (r.at_peak) {
    const auto& a = *r.at_peak;
    nlohmann::json pinned = nlohmann::json::array();
    for (std::size_t i = 0; i < a.pinned.size() && i < 10; ++i) {
      const auto& ps = a.pinned[i];
      nlohmann::json live = nlohmann::json::array();
      for (std::size_t k = 0; k < ps.live_blocks.size() && k < 5; ++k)
        live.push_back(
            {{"size", ps.live_blocks[k].first}, {"stack", replay::describeStack(snap, ps.live_blocks[k].second, 5)}});
      pinned.push_back(
          {{"address", ps.address}, {"size", ps.size}, {"free_bytes", ps.free_bytes}, {"live_blocks", live}});
    }
    j["at_peak"] = {{"cached", a.cached},
                    {"releasable_by_empty_cache", a.releasable},
                    {"pinned", a.cached - a.releasable},
                    {"pinned_segments", pinned}};
  }
  if (!r.invariant_failure.empty()) j["invariant_failure"] = r.invariant_failure;
  return j;
}

nlohmann::json whatIfJson(const traces::Snapshot& snap, const replay::WhatIfReport& rep, const std::string& path) {
  nlohmann::json j;
  j["trace"] = path;
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

void printWhatIf(std::ostream& out, const traces::Snapshot& snap, const replay::WhatIfReport& rep,
                 const std::string& path) {
  out << replay::whatIfReportText(snap, rep, path);
}

}  // namespace reservoir::cli
