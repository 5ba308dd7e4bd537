#include "reservoir/replay/report_text.h"

#include <fmt/format.h>

#include "reservoir/replay/conformance.h"
#include "reservoir/simulator/sizes.h"

namespace reservoir::replay {
namespace {

std::string mib(std::int64_t bytes) {
  return bytes < 0 ? "-" + sim::formatSize(static_cast<std::uint64_t>(-bytes))
                   : sim::formatSize(static_cast<std::uint64_t>(bytes));
}

void table(std::string& out, const WhatIfReport& rep) {
  const auto& b = rep.baseline;
  const auto& w = rep.whatif;
  out += fmt::format("  {:<34} {:>14} {:>14} {:>14}\n", "", "baseline", "what-if", "change");
  auto row = [&](const std::string& name, std::int64_t x, std::int64_t y) {
    out += fmt::format("  {:<34} {:>14} {:>14} {:>14}\n", name, mib(x), mib(y), y == x ? "=" : mib(y - x));
  };
  row("peak reserved", b.peak_reserved.bytes, w.peak_reserved.bytes);
  row("peak allocated", b.peak_allocated.bytes, w.peak_allocated.bytes);
  row("final reserved", b.final_reserved, w.final_reserved);
  for (std::size_t i = 0; i < w.probes.size(); ++i) {
    const auto* bp = i < b.probes.size() ? &b.probes[i] : nullptr;
    row("reserved at " + w.probes[i].point, bp ? bp->reserved : 0, w.probes[i].reserved);
    row("allocated at " + w.probes[i].point, bp ? bp->allocated : 0, w.probes[i].allocated);
  }
}

void peakAnalysis(std::string& out, const traces::Snapshot& snap, const RunResult& w) {
  if (!w.at_peak) return;
  const auto& a = *w.at_peak;
  out += fmt::format(
      "  at the what-if peak: {} cached (reserved - allocated); an empty_cache there would return {}; "
      "{} stays pinned by live blocks; fragmentation (peak allocated / peak reserved) {:.3f}\n",
      mib(a.cached), mib(a.releasable), mib(a.cached - a.releasable),
      w.peak_reserved.bytes ? static_cast<double>(w.peak_allocated.bytes) / static_cast<double>(w.peak_reserved.bytes)
                            : 1.0);
  for (std::size_t i = 0; i < a.pinned.size() && i < 3; ++i) {
    const auto& ps = a.pinned[i];
    out += fmt::format("    segment {:#x} ({}) keeps {} free, pinned by {} live block(s)", ps.address,
                       mib(static_cast<std::int64_t>(ps.size)), mib(static_cast<std::int64_t>(ps.free_bytes)),
                       ps.live_blocks.size());
    if (!ps.live_blocks.empty()) out += ", e.g. " + describeStack(snap, ps.live_blocks.front().second, 3);
    out += "\n";
  }
}

void failures(std::string& out, const traces::Snapshot& snap, const WhatIfReport& rep) {
  for (const auto* run : {&rep.baseline, &rep.whatif}) {
    const char* name = run == &rep.baseline ? "baseline" : "what-if";
    if (run->oom)
      out += fmt::format(
          "  {}: OUT OF MEMORY at event {}: malloc({}) on stream {} ({} failed mallocs)\n    stack: {}\n", name,
          run->oom->event, run->oom->size, run->oom->stream, run->oom->count, describeStack(snap, run->oom->stack, 6));
    for (const auto& d : run->demands)
      out += fmt::format("  {}: demand {}: {}\n", name, d.text,
                         !d.capacity_known ? "capacity unknown (give --capacity)"
                         : d.fits          ? fmt::format("fits ({} free)", mib(d.free))
                                           : fmt::format("does NOT fit ({} free)", mib(d.free)));
  }
}

}  // namespace

std::string whatIfReportText(const traces::Snapshot& snap, const WhatIfReport& rep, const std::string& path) {
  const auto& b = rep.baseline;
  const auto& w = rep.whatif;
  std::string out = fmt::format("{} (device {})\n", path, snap.devices[rep.device_index].device);
  table(out, rep);
  out += fmt::format("  exact bytes: peak reserved {} -> {}, peak allocated {} -> {}\n", b.peak_reserved.bytes,
                     w.peak_reserved.bytes, b.peak_allocated.bytes, w.peak_allocated.bytes);
  out += fmt::format("  peak reserved reached at event {}: {}\n", w.peak_reserved.event,
                     describeStack(snap, w.peak_reserved.stack, 4));
  peakAnalysis(out, snap, w);
  failures(out, snap, rep);
  out += fmt::format("  capacity: {}\n",
                     rep.capacity
                         ? fmt::format("{} ({})", mib(static_cast<std::int64_t>(*rep.capacity)), rep.capacity_source)
                         : rep.capacity_source);
  out += fmt::format("  baseline vs recording: peak reserved {} vs recorded {}{}\n", b.peak_reserved.bytes,
                     rep.recorded_peak_reserved,
                     rep.baseline_matches_recording ? " (the baseline reproduces the recording)" : " (DIFFERS)");
  for (const auto& n : rep.notes) out += "  note: " + n + "\n";
  return out;
}

}  // namespace reservoir::replay
