#include "conformance/peak_resets.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>

namespace reservoir::replay::detail {
namespace {

constexpr std::array<const char*, 4> kAggregatePeaks = {"reserved_bytes.all.peak", "allocated_bytes.all.peak",
                                                        "active_bytes.all.peak", "requested_bytes.all.peak"};

std::int64_t valueOf(const TimelinePoint& p, std::size_t k) {
  switch (k) {
    case 0: return p.reserved;
    case 1: return p.allocated;
    case 2: return p.active;
    default: return p.requested;
  }
}

// Boundaries b (a reset just before event b) whose peaks (the state at b, then every later
// state) equal the capture's aggregate peaks: [first, last], or nullopt.
std::optional<std::pair<std::size_t, std::size_t>> candidateRange(const std::vector<TimelinePoint>& timeline,
                                                                  const CaptureFacts& capture) {
  const std::size_t n = timeline.size();
  std::optional<std::pair<std::size_t, std::size_t>> range;
  std::array<std::int64_t, 4> suffix{};  // max over timeline[b..n)
  std::array<std::optional<std::int64_t>, 4> target;
  for (std::size_t k = 0; k < 4; ++k)
    if (auto it = capture.memory_stats.find(kAggregatePeaks[k]); it != capture.memory_stats.end())
      target[k] = it->second;
  for (std::size_t b = n; b-- > 1;) {  // b = 0 is no reset at all
    bool all = true;
    for (std::size_t k = 0; k < 4; ++k) {
      suffix[k] = std::max(suffix[k], valueOf(timeline[b], k));
      const std::int64_t peak = std::max(suffix[k], valueOf(timeline[b - 1], k));
      all = all && (!target[k] || peak == *target[k]);
    }
    if (all) range = range ? std::pair{b, range->second} : std::pair{b, b};
  }
  return range;
}

}  // namespace

bool onlyPeaksDiffer(const ConformanceReport& report) {
  if (report.first_divergence || !report.layout_mismatches.empty() || !report.invariant_failure.empty() ||
      report.stats_mismatches.empty())
    return false;
  return std::all_of(report.stats_mismatches.begin(), report.stats_mismatches.end(),
                     [](const Mismatch& m) { return m.what.ends_with(".peak"); });
}

namespace {

// Where a replay with the reset at boundary b stands: every peak equal (0), some peak still
// above the capture's (the reset must come later, +1), some below (earlier, -1), or both (2).
int direction(const ConformanceReport& r) {
  if (r.exact()) return 0;
  if (!onlyPeaksDiffer(r)) return 2;
  bool above = false, below = false;
  for (const Mismatch& m : r.stats_mismatches) {
    const long long expected = std::stoll(m.expected), simulated = std::stoll(m.simulated);
    above = above || simulated > expected;
    below = below || simulated < expected;
  }
  return above && below ? 2 : above ? 1 : -1;
}

}  // namespace

ConformanceOptions searchReplayOptions(const ConformanceOptions& options) {
  ConformanceOptions inner = options;
  inner.find_peak_resets = false;
  inner.find_missing_fraction = false;
  inner.program = nullptr;
  inner.request_stream = nullptr;
  inner.progress = nullptr;
  inner.keep_timeline = false;
  return inner;
}

void findPeakReset(const traces::Snapshot& snapshot, std::size_t device_index, const ConformanceOptions& options,
                   ConformanceReport& report) {
  if (!options.env.capture || !onlyPeaksDiffer(report)) return;
  const ConformanceOptions inner = searchReplayOptions(options);
  ConformanceOptions timeline_opts = inner;
  timeline_opts.keep_timeline = true;
  auto with_timeline = runConformance(snapshot, device_index, timeline_opts);
  if (!with_timeline) return;
  const auto range = candidateRange(with_timeline->timeline, *options.env.capture);
  const Wording& wording = wordingOr(options.env.wording);
  const std::string no_single = fmt::format(
      "only .peak statistics differ from the capture's: the program reset peaks "
      "(torch.cuda.reset_peak_memory_stats), but no single reset explains them (give {})",
      wording.give_value(Input::kResetPeaks, "POINT"));
  if (!range) {
    report.notes.push_back(no_single);
    return;
  }
  // Every peak only falls as the reset moves later, so the boundaries where all agree form
  // one interval inside the aggregate range: find one by bisection, then its two ends.
  std::map<std::size_t, std::pair<int, std::optional<ConformanceReport>>> tried;
  auto at = [&](std::size_t b) -> int {
    if (auto it = tried.find(b); it != tried.end()) return it->second.first;
    ConformanceOptions o = inner;
    o.reset_peaks_at = {static_cast<std::uint32_t>(b)};
    auto r = runConformance(snapshot, device_index, o);
    const int d = r ? direction(*r) : 2;
    tried[b] = {d, d == 0 ? std::optional<ConformanceReport>(std::move(*r)) : std::nullopt};
    return d;
  };
  std::size_t lo = range->first, hi = range->second;
  std::optional<std::size_t> found;
  while (lo <= hi && !found) {
    const std::size_t mid = lo + (hi - lo) / 2;
    const int d = at(mid);
    if (d == 0)
      found = mid;
    else if (d == 1)
      lo = mid + 1;
    else if (d == -1 && mid > 0)
      hi = mid - 1;
    else
      break;
  }
  if (!found) {
    report.notes.push_back(no_single);
    return;
  }
  std::size_t first = *found, last = *found;
  for (std::size_t a = range->first, b = *found; a < b;) {  // the lowest valid boundary
    const std::size_t mid = a + (b - a) / 2;
    if (at(mid) == 0)
      b = first = mid;
    else
      a = mid + 1;
  }
  for (std::size_t a = *found, b = range->second; a < b;) {  // the highest
    const std::size_t mid = a + (b - a + 1) / 2;
    if (at(mid) == 0)
      a = last = mid;
    else
      b = mid - 1;
  }
  ConformanceReport verified = std::move(*tried[first].second);
  const auto& events = snapshot.devices[device_index].events;
  std::string note = fmt::format("peaks were reset after event {}, before event {} ({}: {})", first - 1, first,
                                 describeEvent(events[first]), describeStack(snapshot, events[first].stack, 1));
  if (last > first) note += fmt::format("; a reset anywhere up to event {} gives the same peaks", last);
  note += fmt::format(" (found from the replay; {} pins it)",
                      wording.give_value(Input::kResetPeaks, fmt::format("event:{}", first - 1)));
  verified.notes.push_back(std::move(note));
  report = std::move(verified);
}

}  // namespace reservoir::replay::detail
