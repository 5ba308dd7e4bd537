// The sweep's ranking as text (`reservoir sweep`, the GUI's sweep dialog summary).
#include <fmt/format.h>

#include "reservoir/replay/report_text.h"
#include "reservoir/simulator/sizes.h"

namespace reservoir::replay {
namespace {

std::string size(std::int64_t bytes) {
  return bytes < 0 ? "-" + sim::formatSize(static_cast<std::uint64_t>(-bytes))
                   : sim::formatSize(static_cast<std::uint64_t>(bytes));
}

std::string flagsText(const std::vector<std::string>& flags) {
  std::string out;
  for (std::size_t i = 0; i + 1 < flags.size(); i += 2)
    out += fmt::format("{}{} '{}'", out.empty() ? "" : " ", flags[i], flags[i + 1]);
  return out;
}

std::string callsText(const SweepCandidate& c) {
  if (c.settings) return "no empty_cache";
  std::string out = fmt::format("{} empty_cache call{}", c.empty_cache_calls, c.empty_cache_calls == 1 ? "" : "s");
  if (c.calls_per_step) out += " (" + perStepWords(*c.calls_per_step) + ")";
  return out;
}

std::string savingText(const SweepCandidate& c) {
  if (c.saving > 0) return "saves " + size(c.saving);
  if (c.saving == 0) return "saves nothing";
  return "costs " + size(-c.saving) + " more";
}

std::string candidateLine(std::size_t rank, const SweepCandidate& c) {
  return fmt::format("{:>3}. {}; {}: {}, price {}{}{}\n     {}\n", rank, savingText(c), c.description, callsText(c),
                     candidatePriceWords(c), c.within_cap ? "" : " (over the call cap)",
                     c.oom ? " (OUT OF MEMORY)" : "", flagsText(c.edits));
}

}  // namespace

std::string sweepReportText(const SweepReport& rep, const std::string& path, std::size_t top) {
  std::string out = fmt::format("{}: {} candidates ({} replays) in {:.2f} s{}\n", path, rep.evaluated, rep.replays,
                                rep.seconds, rep.cancelled ? " (cancelled: the rest were not replayed)" : "");
  out += fmt::format("minimizing {}: baseline {} (run peak {})\n", rep.objective, size(rep.baseline_objective),
                     size(rep.baseline_peak_reserved));
  out += rep.max_calls ? fmt::format("empty_cache calls allowed: at most {} in the trace, {}\n", *rep.max_calls,
                                     rep.max_calls_source)
                       : fmt::format("empty_cache calls allowed: {}\n", rep.max_calls_source);
  out += "ranked: within the cap first, then the largest saving, then the lowest price\n";
  for (std::size_t i = 0; i < rep.candidates.size() && i < top; ++i) out += candidateLine(i + 1, rep.candidates[i]);
  if (!rep.pareto.empty()) {
    out += "saving against price (the Pareto front, cheapest first):\n";
    for (std::size_t i : rep.pareto) {
      const auto& c = rep.candidates[i];
      out += fmt::format("  {:>12} for {:>9}  {}  [#{}] {}\n", size(c.saving), priceText(c.price_seconds), callsText(c),
                         i + 1, c.description);
    }
  }
  return out;
}

}  // namespace reservoir::replay
