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

std::int64_t valueOf(const sim::StatTotals& t, std::size_t k) {
  switch (k) {
    case 0: return t.reserved;
    case 1: return t.allocated;
    case 2: return t.active;
    default: return t.requested;
  }
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
  inner.after_request = nullptr;
  inner.reset_peaks_before_each_request = false;
  inner.keep_timeline = false;
  return inner;
}

namespace {

// Where a reset may go, from one replay that resets the peaks before every request and looks
// at the model after each. A request's peaks are then the highest each statistic stood during
// it (or at its start). A reset before event b acts before the first request that starts at b
// or later, and a statistic's final peak is the highest of those requests' peaks; it falls as
// b moves later. So each compared `.peak` statistic allows the boundaries after the last
// request that exceeded the capture's value and up to the last that reached it, and one reset
// fits every statistic inside the intersection of those intervals.
//
// The search has always kept to the range the aggregate figures after each request allow (the
// state after the request holding event b-1 and after every later one, against the capture's
// reserved, allocated, active and requested peaks); that range is found the same way, from the
// same replay, without keeping those figures per event.
class ResetBounds {
 public:
  ResetBounds(const ConformanceReport& report, const CaptureFacts& capture) {
    const auto& keys = sim::peakStatKeys();
    for (const std::string& key : report.stats_compared) {
      const auto k = std::find(keys.begin(), keys.end(), key);
      const auto target = capture.memory_stats.find(key);
      if (k != keys.end() && target != capture.memory_stats.end())
        peaks_.push_back({static_cast<std::size_t>(k - keys.begin()), target->second, std::nullopt, std::nullopt});
    }
    for (std::size_t k = 0; k < kAggregatePeaks.size(); ++k)
      if (auto it = capture.memory_stats.find(kAggregatePeaks[k]); it != capture.memory_stats.end())
        aggregates_.push_back({k, it->second, std::nullopt, std::nullopt});
  }

  // Request [first, end) replayed; `model` as it stands after it.
  void request(std::size_t first, std::size_t end, const sim::CachingAllocator& model) {
    if (first == 0) {  // a refitted replay starts again
      for (Bound& b : peaks_) b.reached = b.exceeded = std::nullopt;
      for (Bound& b : aggregates_) b.reached = b.exceeded = std::nullopt;
    }
    last_start_ = first;
    const sim::PeakValues peaks = model.peaks();
    for (Bound& b : peaks_) note(b, peaks[b.index], first);
    const sim::StatTotals now = model.totals();
    for (Bound& b : aggregates_) note(b, valueOf(now, b.index), end);
  }

  // The boundaries b (a reset just before event b) that give every peak, or nullopt. A reset
  // past the last request's start acts on none.
  [[nodiscard]] std::optional<std::pair<std::size_t, std::size_t>> range() const {
    return intersection(peaks_, last_start_);
  }

  // The range the aggregates after each request allow within [1, events), or nullopt: event
  // b - 1 must come after the last request whose state exceeded a peak's value, and no later
  // than the end of the last one that reached it.
  [[nodiscard]] std::optional<std::pair<std::size_t, std::size_t>> aggregateRange(std::size_t events) const {
    if (events < 2) return std::nullopt;
    return intersection(aggregates_, events - 1);
  }

 private:
  struct Bound {
    std::size_t index = 0;  // in sim::peakStatKeys(), or kAggregatePeaks
    std::int64_t target = 0;
    std::optional<std::size_t> reached, exceeded;  // where the last request that did so starts or ends
  };
  static void note(Bound& b, std::int64_t value, std::size_t at) {
    if (value >= b.target) b.reached = at;
    if (value > b.target) b.exceeded = at;
  }
  // The boundaries in [1, hi] past every bound's `exceeded` and up to every bound's `reached`.
  static std::optional<std::pair<std::size_t, std::size_t>> intersection(const std::vector<Bound>& bounds,
                                                                         std::size_t hi) {
    std::size_t lo = 1;
    for (const Bound& b : bounds) {
      if (!b.reached) return std::nullopt;
      hi = std::min(hi, *b.reached);
      if (b.exceeded) lo = std::max(lo, *b.exceeded + 1);
    }
    if (lo > hi) return std::nullopt;
    return std::pair{lo, hi};
  }
  std::vector<Bound> peaks_;       // every compared `.peak`: at a request's start
  std::vector<Bound> aggregates_;  // the four aggregates' states: at a request's end
  std::size_t last_start_ = 0;
};

// The full replay with one reset at b, when it is exact.
std::optional<ConformanceReport> exactWithResetAt(const traces::Snapshot& snapshot, std::size_t device_index,
                                                  const ConformanceOptions& inner, std::size_t b) {
  ConformanceOptions o = inner;
  o.reset_peaks_at = {static_cast<std::uint32_t>(b)};
  auto r = runConformance(snapshot, device_index, o);
  if (!r || !r->exact()) return std::nullopt;
  return std::move(*r);
}

// The same interval by bisection, a replay per probe: for a search the one-pass bounds cannot
// settle (they are verified, and this decides when a verification fails).
std::optional<std::pair<std::size_t, std::size_t>> bisectResetRange(const traces::Snapshot& snapshot,
                                                                    std::size_t device_index,
                                                                    const ConformanceOptions& inner,
                                                                    std::pair<std::size_t, std::size_t> range) {
  // Every peak only falls as the reset moves later, so the boundaries where all agree form
  // one interval inside the aggregate range: find one by bisection, then its two ends.
  std::map<std::size_t, int> tried;
  auto at = [&](std::size_t b) -> int {
    if (auto it = tried.find(b); it != tried.end()) return it->second;
    ConformanceOptions o = inner;
    o.reset_peaks_at = {static_cast<std::uint32_t>(b)};
    auto r = runConformance(snapshot, device_index, o);
    return tried[b] = r ? direction(*r) : 2;
  };
  std::size_t lo = range.first, hi = range.second;
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
  if (!found) return std::nullopt;
  std::size_t first = *found, last = *found;
  for (std::size_t a = range.first, b = *found; a < b;) {  // the lowest valid boundary
    const std::size_t mid = a + (b - a) / 2;
    if (at(mid) == 0)
      b = first = mid;
    else
      a = mid + 1;
  }
  for (std::size_t a = *found, b = range.second; a < b;) {  // the highest
    const std::size_t mid = a + (b - a + 1) / 2;
    if (at(mid) == 0)
      a = last = mid;
    else
      b = mid - 1;
  }
  return std::pair{first, last};
}

}  // namespace

void findPeakReset(const traces::Snapshot& snapshot, std::size_t device_index, const ConformanceOptions& options,
                   ConformanceReport& report) {
  if (!options.env.capture || !onlyPeaksDiffer(report)) return;
  const ConformanceOptions inner = searchReplayOptions(options);
  // One replay, with a reset before every request, gives each request's peaks and states.
  ConformanceOptions every = inner;
  ResetBounds bounds(report, *options.env.capture);
  every.after_request = [&](std::size_t first, std::size_t end, const sim::CachingAllocator& model) {
    bounds.request(first, end, model);
  };
  every.reset_peaks_before_each_request = true;
  if (!runConformance(snapshot, device_index, every)) return;
  const auto range = bounds.aggregateRange(snapshot.devices[device_index].events.size());
  const Wording& wording = wordingOr(options.env.wording);
  const std::string no_single = fmt::format(
      "only .peak statistics differ from the capture's: the program reset peaks "
      "(torch.cuda.reset_peak_memory_stats), but no single reset explains them (give {})",
      wording.give_value(Input::kResetPeaks, "POINT"));
  std::optional<std::pair<std::size_t, std::size_t>> found;
  if (const auto one_pass = bounds.range(); range && one_pass) {
    found = std::pair{std::max(one_pass->first, range->first), std::min(one_pass->second, range->second)};
    if (found->first > found->second) found.reset();
  }
  // Both ends are verified by a replay each; should either not be exact, bisection decides.
  std::optional<ConformanceReport> verified;
  if (found) {
    verified = exactWithResetAt(snapshot, device_index, inner, found->first);
    if (!verified ||
        (found->second > found->first && !exactWithResetAt(snapshot, device_index, inner, found->second))) {
      found = bisectResetRange(snapshot, device_index, inner, *range);
      verified = found ? exactWithResetAt(snapshot, device_index, inner, found->first) : std::nullopt;
    }
  }
  if (!found || !verified) {
    report.notes.push_back(no_single);
    return;
  }
  const auto [first, last] = *found;
  const auto& events = snapshot.devices[device_index].events;
  std::string note =
      fmt::format("peaks were reset after event {}, before event {} ({}: {})", first - 1, first,
                  describeEvent(snapshot, events[first]), describeStack(snapshot, events[first].stack, 1));
  if (last > first) note += fmt::format("; a reset anywhere up to event {} gives the same peaks", last);
  note += fmt::format(" (found from the replay; {} pins it)",
                      wording.give_value(Input::kResetPeaks, fmt::format("event:{}", first - 1)));
  verified->notes.push_back(std::move(note));
  report = std::move(*verified);
}

}  // namespace reservoir::replay::detail
