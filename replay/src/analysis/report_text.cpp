#include "reservoir/replay/report_text.h"

#include <fmt/format.h>

#include <algorithm>

#include "reservoir/replay/conformance.h"
#include "reservoir/replay/peak_explain.h"
#include "reservoir/replay/point.h"
#include "reservoir/simulator/sizes.h"

namespace reservoir::replay {
namespace {

std::string mib(std::int64_t bytes) {
  return bytes < 0 ? "-" + sim::formatSize(static_cast<std::uint64_t>(-bytes))
                   : sim::formatSize(static_cast<std::uint64_t>(bytes));
}

bool probedAt(const RunResult& run, const std::string& point) {
  return std::any_of(run.probes.begin(), run.probes.end(), [&](const Probe& p) { return p.point == point; });
}

// The cleanups' and releases' points no probe measures (each once, in the edits' order), with the
// first figure of each run there: the edits' own effect, which the verdict and the table report.
struct EditPointChange {
  std::string point;
  std::int64_t baseline = 0, whatif = 0;
};
std::vector<EditPointChange> unprobedEditPoints(const WhatIfReport& rep) {
  std::vector<EditPointChange> out;
  for (const auto& e : rep.edits) {
    const auto* w = firstEditFigure(rep.whatif, e);
    const auto* b = firstEditFigure(rep.baseline, e);
    if (!w || !b || probedAt(rep.whatif, w->point)) continue;
    if (std::any_of(out.begin(), out.end(), [&](const EditPointChange& c) { return c.point == w->point; })) continue;
    out.push_back(EditPointChange{w->point, b->reserved, w->reserved});
  }
  return out;
}

void table(std::string& out, const WhatIfReport& rep) {
  const auto& b = rep.baseline;
  const auto& w = rep.whatif;
  out += fmt::format("  {:<34} {:>14} {:>14} {:>14}\n", "", "baseline", "what-if", "change");
  auto row = [&](const std::string& name, std::int64_t x, std::int64_t y) {
    out += fmt::format("  {:<34} {:>14} {:>14} {:>14}\n", name, mib(x), mib(y), y == x ? "same" : mib(y - x));
  };
  row("peak reserved", b.peak_reserved.bytes, w.peak_reserved.bytes);
  row("peak allocated", b.peak_allocated.bytes, w.peak_allocated.bytes);
  row("final reserved", b.final_reserved, w.final_reserved);
  for (const auto& c : unprobedEditPoints(rep)) row("reserved at " + c.point, c.baseline, c.whatif);
  for (std::size_t i = 0; i < w.probes.size(); ++i) {
    const auto* bp = i < b.probes.size() ? &b.probes[i] : nullptr;
    row("reserved at " + w.probes[i].point, bp ? bp->reserved : 0, w.probes[i].reserved);
    row("allocated at " + w.probes[i].point, bp ? bp->allocated : 0, w.probes[i].allocated);
  }
}

void peakAnalysis(std::string& out, const traces::Snapshot& snap, const RunResult& w) {
  if (!w.at_peak) return;
  const CachePins pins = cachePins(*w.at_peak, PinLimits{3, 1, 1});
  out += fmt::format(
      "  at the what-if peak: {} cached (reserved - allocated); an empty_cache there would return {}; "
      "{}; fragmentation (peak allocated / peak reserved) {:.3f}\n",
      mib(pins.cached), mib(pins.releasable),
      pins.pinned > 0 ? mib(pins.pinned) + " stays pinned by live blocks"
                      : std::string("nothing stays pinned by live blocks"),
      w.peak_reserved.bytes ? static_cast<double>(w.peak_allocated.bytes) / static_cast<double>(w.peak_reserved.bytes)
                            : 1.0);
  for (const auto& ps : pins.segments) {
    out += fmt::format("    segment {:#x} ({}) keeps {} free, pinned by {} live block(s)", ps.address,
                       mib(static_cast<std::int64_t>(ps.size)), mib(static_cast<std::int64_t>(ps.free_bytes)),
                       ps.live_count);
    if (!ps.live_blocks.empty()) out += ", e.g. " + describeStack(snap, ps.live_blocks.front().second, 3);
    out += "\n";
  }
  // The stack that pins the most (the state view's headline and the HTML report name the same).
  if (!pins.stacks.empty() && pins.stacks.front().pinned_bytes > 0) {
    const PinningStack& top = pins.stacks.front();
    out += fmt::format("    mostly pinned by {} ({} of the free bytes, {} live block(s) in {} segment(s))\n",
                       describeStack(snap, top.stack, 3), mib(static_cast<std::int64_t>(top.pinned_bytes)), top.blocks,
                       top.segments);
  }
}

void failures(std::string& out, const traces::Snapshot& snap, const WhatIfReport& rep) {
  for (const auto* run : {&rep.baseline, &rep.whatif}) {
    const char* name = run == &rep.baseline ? "baseline" : "what-if";
    if (run->oom)
      out += fmt::format(
          "  {}: OUT OF MEMORY at event {} (allocation request {}): malloc({}) on stream {} ({} failed mallocs)\n"
          "    reserved right after it: {} bytes, allocated {} (where a program that does not catch it ends)\n"
          "    stack: {}\n",
          name, run->oom->event, run->oom->request, run->oom->size, run->oom->stream, run->oom->count,
          run->oom->reserved_after, run->oom->allocated_after, describeStack(snap, run->oom->stack, 6));
    for (const auto& d : run->demands)
      out += fmt::format("  {}: demand {}: {}\n", name, d.text,
                         !d.capacity_known ? "capacity unknown (give the device's capacity)"
                         : d.fits          ? fmt::format("fits ({} free)", mib(d.free))
                                           : fmt::format("does NOT fit ({} free)", mib(d.free)));
  }
}

// "6.86 -> 4.14 GiB" (one unit when both share it), "6.86 GiB -> 900.00 MiB" otherwise.
std::string fromTo(std::int64_t x, std::int64_t y) {
  const std::string a = mib(x), b = mib(y);
  const auto ua = a.rfind(' '), ub = b.rfind(' ');
  if (ua != std::string::npos && ub != std::string::npos && a.substr(ua) == b.substr(ub))
    return a.substr(0, ua) + " -> " + b;
  return a + " -> " + b;
}

std::string changeText(const std::string& what, std::int64_t x, std::int64_t y) {
  if (x == y) return fmt::format("{} unchanged at {}", what, mib(x));
  return fmt::format("{} {}", what, fromTo(x, y));
}

bool onlyCleanupAt(const WhatIfReport& rep, const std::string& point) {
  std::size_t cleanups = 0;
  bool there = false;
  for (const auto& e : rep.edits)
    if (e.kind == Edit::Kind::kCleanup) {
      ++cleanups;
      there = there || e.point.text == point;
    }
  return cleanups == 1 && there;
}

// Reserved at the cleanups' and releases' own points where no probe says it: "reserved there"
// for a single such edit.
void editPointClauses(std::vector<std::string>& parts, const WhatIfReport& rep) {
  const auto changes = unprobedEditPoints(rep);
  const auto edits = std::count_if(rep.edits.begin(), rep.edits.end(), [](const Edit& e) {
    return e.kind == Edit::Kind::kCleanup || e.kind == Edit::Kind::kRelease;
  });
  for (std::size_t i = 0; i < changes.size() && i < 2; ++i) {
    const std::string label = edits == 1 ? std::string("reserved there") : "reserved " + describePoint(changes[i].point);
    parts.push_back(changeText(label, changes[i].baseline, changes[i].whatif));
  }
}

void peakClause(std::vector<std::string>& parts, const WhatIfReport& rep) {
  const auto& b = rep.baseline.peak_reserved;
  const auto& w = rep.whatif.peak_reserved;
  if (w.bytes == b.bytes)
    parts.push_back(fmt::format("run peak unchanged at {} (event {})", mib(w.bytes), w.event));
  else if (w.bytes < b.bytes && rep.whatif.oom &&
           (!rep.baseline.oom || rep.whatif.oom->event < rep.baseline.oom->event))
    // A run that fails earlier reserves less, which saves nothing.
    parts.push_back(fmt::format("run peak {} (lower only because the edited run runs out of memory; event {})",
                                fromTo(b.bytes, w.bytes), w.event));
  else if (w.bytes < b.bytes)
    parts.push_back(
        fmt::format("run peak {} (saves {}; event {})", fromTo(b.bytes, w.bytes), mib(b.bytes - w.bytes), w.event));
  else
    parts.push_back(fmt::format("run peak RISES {} (event {})", fromTo(b.bytes, w.bytes), w.event));
}

void outcomeClauses(std::vector<std::string>& parts, const WhatIfReport& rep) {
  const auto& b = rep.baseline;
  const auto& w = rep.whatif;
  if (w.oom && !b.oom) parts.push_back(fmt::format("runs OUT OF MEMORY at event {}", w.oom->event));
  if (b.oom && !w.oom) parts.push_back("no longer runs out of memory");
  if (b.oom && w.oom) parts.push_back(fmt::format("still runs out of memory (event {})", w.oom->event));
  for (const auto& d : w.demands) {
    if (!d.capacity_known)
      parts.push_back(fmt::format("whether {} fits is unknown (no capacity)", d.text));
    else
      parts.push_back(fmt::format("{} {} ({} free)", d.text, d.fits ? "fits" : "does NOT fit", mib(d.free)));
  }
  const std::size_t inserted =
      w.empty_cache_calls > b.empty_cache_calls ? w.empty_cache_calls - b.empty_cache_calls : 0;
  if (inserted > 0)
    parts.push_back(fmt::format("{} empty_cache call{}, about {} of synchronisation and driver time", inserted,
                                inserted == 1 ? "" : "s", priceText(cleanupPriceSeconds(b, w, inserted))));
}

// The baseline against the recording; a predicted trace has none to be compared with.
void baselineLine(std::string& out, const WhatIfReport& rep, bool recorded) {
  const auto& b = rep.baseline;
  if (!recorded) {
    out += fmt::format("  baseline: peak reserved {} (a predicted trace: there is no recording to compare with)\n",
                       b.peak_reserved.bytes);
    return;
  }
  // Equal peaks can still come from a replay that departs from the recording (the notes say where).
  const char* verdict = rep.baseline_matches_recording ? " (the baseline reproduces the recording)"
                        : b.peak_reserved.bytes == rep.recorded_peak_reserved
                            ? " (the same peak, but the replay departs from the recording: see the notes)"
                            : " (DIFFERS)";
  out += fmt::format("  baseline vs recording: peak reserved {} vs recorded {}{}\n", b.peak_reserved.bytes,
                     rep.recorded_peak_reserved, verdict);
}

}  // namespace

std::string describePoint(const std::string& t) {
  std::string body = t, run;
  if (const auto hash = occurrenceSuffix(body);  // "#digits" only: a '#' inside a name stays in it
      hash != std::string::npos && !t.starts_with("time:") && !t.starts_with("event:")) {
    run = fmt::format(" (run {})", body.substr(hash + 1));
    body = body.substr(0, hash);
  }
  if (body.starts_with("after:")) return "after " + body.substr(6) + run;
  if (body.starts_with("before:")) return "before " + body.substr(7) + run;
  if (body.starts_with("annotation:")) {
    const std::string rest = body.substr(11);
    const auto colon = rest.rfind(':');
    const std::string name = rest.substr(0, colon);
    const std::string stage = colon == std::string::npos ? "" : rest.substr(colon + 1);
    return fmt::format("at the {} of {}{}", stage == "end" ? "end" : "start", name, run);
  }
  if (body.starts_with("event:")) return "after event " + body.substr(6);
  if (body.starts_with("time:")) return "at time " + body.substr(5) + " us";
  return body + run;
}

std::string describeEdits(const WhatIfReport& rep) {
  std::vector<std::string> parts;
  for (const auto& e : rep.edits) switch (e.kind) {
      case Edit::Kind::kCleanup: parts.push_back("empty_cache " + describePoint(e.point.text)); break;
      case Edit::Kind::kRelease:
        parts.push_back(fmt::format("freeing the tensors of {} {}", e.selector ? e.selector->text : std::string(),
                                    describePoint(e.point.text)));
        break;
      case Edit::Kind::kResetPeaks: parts.push_back("peaks reset " + describePoint(e.point.text)); break;
      case Edit::Kind::kProbe:
      case Edit::Kind::kDemand: break;
    }
  if (rep.settings_whatif != rep.settings_baseline)
    parts.push_back("settings " + (rep.settings_whatif.empty() ? std::string("(defaults)") : rep.settings_whatif));
  // A memory fraction other than the recording's is an edit of the run too ("no edits" hid it).
  if (rep.edited_run.fraction != rep.edited_run.recorded_fraction)
    parts.push_back(fmt::format("memory fraction {}", rep.edited_run.fraction));
  if (parts.empty()) return "no edits";
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : " + ") + p;
  return out;
}

const EditFigure* firstEditFigure(const RunResult& run, const Edit& edit) {
  for (const auto& f : run.at_edits)
    if (f.kind == edit.kind && f.text == edit.text) return &f;
  return nullptr;
}

std::string whatIfVerdict(const WhatIfReport& rep) {
  std::vector<std::string> parts;
  const auto& w = rep.whatif;
  editPointClauses(parts, rep);
  for (std::size_t i = 0; i < w.probes.size() && i < 2; ++i) {
    const auto* bp = i < rep.baseline.probes.size() ? &rep.baseline.probes[i] : nullptr;
    const std::string label = onlyCleanupAt(rep, w.probes[i].point) ? std::string("reserved there")
                                                                    : "reserved " + describePoint(w.probes[i].point);
    parts.push_back(changeText(label, bp ? bp->reserved : 0, w.probes[i].reserved));
  }
  peakClause(parts, rep);
  outcomeClauses(parts, rep);
  std::string out = describeEdits(rep) + ": ";
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
  return out;
}

std::string priceText(double seconds) {
  if (seconds <= 0) return "0";
  if (seconds < 1e-3) return fmt::format("{:.2f} ms", seconds * 1e3);
  if (seconds < 1.0) return fmt::format("{:.1f} ms", seconds * 1e3);
  return fmt::format("{:.1f} s", seconds);
}

std::string perStepWords(double calls_per_step) {
  if (calls_per_step <= 0) return "none";
  if (calls_per_step < 1) return fmt::format("1 every {:.3g} steps", 1.0 / calls_per_step);
  return fmt::format("{:.3g} per step", calls_per_step);
}

std::string candidatePriceWords(const SweepCandidate& c) {
  std::string out = priceText(c.price_seconds);
  if (c.price_per_step_seconds && !c.settings) out += " in all, " + priceText(*c.price_per_step_seconds) + " per step";
  return out;
}

std::string whatIfReportText(const traces::Snapshot& snap, const WhatIfReport& rep, const std::string& path,
                             bool recorded) {
  const auto& b = rep.baseline;
  const auto& w = rep.whatif;
  std::string out = whatIfVerdict(rep) + "\n";
  out += fmt::format("{} (device {})\n", path, snap.devices[rep.device_index].device);
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
  baselineLine(out, rep, recorded);
  for (const auto& n : rep.notes) out += "  note: " + n + "\n";
  return out;
}

}  // namespace reservoir::replay
