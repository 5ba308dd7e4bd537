#include "whatif_output.h"

#include <fmt/format.h>

#include "common.h"
#include "reservoir/simulator/sizes.h"

namespace reservoir::cli {
namespace {

std::string mib(std::int64_t bytes) {
  return bytes < 0 ? "-" + sim::formatSize(static_cast<std::uint64_t>(-bytes)) : sim::formatSize(static_cast<std::uint64_t>(bytes));
}

nlohmann::json peakJson(const traces::Snapshot& snap, const replay::PeakInfo& p) {
  if (p.op == replay::kNoOp) return nullptr;
  return {{"bytes", p.bytes}, {"event_index", p.event}, {"time_us", p.time_us}, {"stack", replay::describeStack(snap, p.stack, 6)}};
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
  j["fragmentation"] = r.peak_reserved.bytes ? static_cast<double>(r.peak_allocated.bytes) / static_cast<double>(r.peak_reserved.bytes) : 1.0;
  j["empty_cache_calls"] = r.empty_cache_calls;
  j["probes"] = nlohmann::json::object();
  for (const auto& p : r.probes) j["probes"][p.point] = {{"reserved", p.reserved}, {"allocated", p.allocated}, {"active", p.active}};
  if (r.oom)
    j["oom"] = {{"event_index", r.oom->event}, {"size", r.oom->size}, {"stream", r.oom->stream}, {"count", r.oom->count},
                {"stack", replay::describeStack(snap, r.oom->stack, 8)}};
  else
    j["oom"] = nullptr;
  if (!r.demands.empty()) {
    j["demand"] = {{"fits", r.demands[0].fits}, {"free", r.demands[0].free}, {"bytes", r.demands[0].bytes},
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
        live.push_back({{"size", ps.live_blocks[k].first}, {"stack", replay::describeStack(snap, ps.live_blocks[k].second, 5)}});
      pinned.push_back({{"address", ps.address}, {"size", ps.size}, {"free_bytes", ps.free_bytes}, {"live_blocks", live}});
    }
    j["at_peak"] = {{"cached", a.cached}, {"releasable_by_empty_cache", a.releasable}, {"pinned", a.cached - a.releasable},
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
  j["baseline"]["decision_change_at"] = rep.baseline.decision_change ? nlohmann::json(*rep.baseline.decision_change) : nlohmann::json(nullptr);
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

void printWhatIf(std::ostream& out, const traces::Snapshot& snap, const replay::WhatIfReport& rep, const std::string& path) {
  const auto& b = rep.baseline;
  const auto& w = rep.whatif;
  out << fmt::format("{} (device {})\n", path, snap.devices[rep.device_index].device);
  out << fmt::format("  {:<34} {:>14} {:>14} {:>14}\n", "", "baseline", "what-if", "change");
  auto row = [&](const std::string& name, std::int64_t x, std::int64_t y) {
    out << fmt::format("  {:<34} {:>14} {:>14} {:>14}\n", name, mib(x), mib(y), y == x ? "=" : mib(y - x));
  };
  row("peak reserved", b.peak_reserved.bytes, w.peak_reserved.bytes);
  row("peak allocated", b.peak_allocated.bytes, w.peak_allocated.bytes);
  row("final reserved", b.final_reserved, w.final_reserved);
  for (std::size_t i = 0; i < w.probes.size(); ++i) {
    const auto* bp = i < b.probes.size() ? &b.probes[i] : nullptr;
    row("reserved at " + w.probes[i].point, bp ? bp->reserved : 0, w.probes[i].reserved);
    row("allocated at " + w.probes[i].point, bp ? bp->allocated : 0, w.probes[i].allocated);
  }
  out << fmt::format("  exact bytes: peak reserved {} -> {}, peak allocated {} -> {}\n", b.peak_reserved.bytes,
                     w.peak_reserved.bytes, b.peak_allocated.bytes, w.peak_allocated.bytes);
  out << fmt::format("  peak reserved reached at event {}: {}\n", w.peak_reserved.event,
                     replay::describeStack(snap, w.peak_reserved.stack, 4));
  if (w.at_peak) {
    const auto& a = *w.at_peak;
    out << fmt::format("  at the what-if peak: {} cached (reserved - allocated); an empty_cache there would return {}; "
                       "{} stays pinned by live blocks; fragmentation (peak allocated / peak reserved) {:.3f}\n",
                       mib(a.cached), mib(a.releasable), mib(a.cached - a.releasable),
                       w.peak_reserved.bytes ? static_cast<double>(w.peak_allocated.bytes) / static_cast<double>(w.peak_reserved.bytes) : 1.0);
    for (std::size_t i = 0; i < a.pinned.size() && i < 3; ++i) {
      const auto& ps = a.pinned[i];
      out << fmt::format("    segment {:#x} ({}) keeps {} free, pinned by {} live block(s)", ps.address, mib(static_cast<std::int64_t>(ps.size)),
                         mib(static_cast<std::int64_t>(ps.free_bytes)), ps.live_blocks.size());
      if (!ps.live_blocks.empty()) out << ", e.g. " << replay::describeStack(snap, ps.live_blocks.front().second, 3);
      out << "\n";
    }
  }
  for (const auto* run : {&b, &w}) {
    const char* name = run == &b ? "baseline" : "what-if";
    if (run->oom)
      out << fmt::format("  {}: OUT OF MEMORY at event {}: malloc({}) on stream {} ({} failed mallocs)\n    stack: {}\n", name,
                         run->oom->event, run->oom->size, run->oom->stream, run->oom->count,
                         replay::describeStack(snap, run->oom->stack, 6));
    for (const auto& d : run->demands)
      out << fmt::format("  {}: demand {}: {}\n", name, d.text,
                         !d.capacity_known ? "capacity unknown (give --capacity)"
                                           : d.fits ? fmt::format("fits ({} free)", mib(d.free))
                                                    : fmt::format("does NOT fit ({} free)", mib(d.free)));
  }
  out << fmt::format("  capacity: {}\n", rep.capacity ? fmt::format("{} ({})", mib(static_cast<std::int64_t>(*rep.capacity)), rep.capacity_source) : rep.capacity_source);
  out << fmt::format("  baseline vs recording: peak reserved {} vs recorded {}{}\n", b.peak_reserved.bytes,
                     rep.recorded_peak_reserved, rep.baseline_matches_recording ? " (the baseline reproduces the recording)" : " (DIFFERS)");
  for (const auto& n : rep.notes) out << "  note: " << n << "\n";
}

}  // namespace reservoir::cli
