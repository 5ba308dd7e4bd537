// The allocator's statistics, as torch.cuda.memory_stats() reports them.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <string>

namespace reservoir::sim {

// Adds without overflowing: a sum past the int64 range stays at its end. Each size is below
// 2^62 (the reader refuses more), but the cumulative counters of a long or hostile trace, and the
// live total of a few such blocks, can pass 2^63.
inline std::int64_t saturatingAdd(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
  return r;
}

// a * n, saturating (a count grown by the same step n times).
inline std::int64_t saturatingTimes(std::int64_t a, std::uint64_t n) {
  std::int64_t r = 0;
  if (n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
      __builtin_mul_overflow(a, static_cast<std::int64_t>(n), &r))
    return a >= 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
  return r;
}

struct Stat {
  std::int64_t current = 0;
  std::int64_t peak = 0;
  std::int64_t allocated = 0;  // cumulative increases
  std::int64_t freed = 0;      // cumulative decreases

  void increase(std::int64_t amount) {
    current = saturatingAdd(current, amount);
    if (current > peak) peak = current;
    allocated = saturatingAdd(allocated, amount);
  }
  void decrease(std::int64_t amount) {
    current = saturatingAdd(current, -amount);
    freed = saturatingAdd(freed, amount);
  }
  void resetPeak() { peak = current; }
  void resetAccumulated() { allocated = freed = 0; }
};

enum StatType : std::size_t { kAggregate = 0, kSmallPool = 1, kLargePool = 2, kStatTypes = 3 };
using StatArray = std::array<Stat, kStatTypes>;

struct DeviceStats {
  StatArray allocation, segment, active, inactive_split;
  StatArray allocated_bytes, reserved_bytes, active_bytes, inactive_split_bytes, requested_bytes;
  std::int64_t num_alloc_retries = 0;
  std::int64_t num_ooms = 0;
  std::int64_t num_sync_all_streams = 0;
  std::int64_t num_device_alloc = 0;
  std::int64_t num_device_free = 0;
  Stat oversize_allocations;
  Stat oversize_segments;
  std::int64_t max_split_size = -1;

  void resetPeaks();
  void resetAccumulated();
  // Sets each statistic's aggregate ("all") cumulative counts (allocated, freed) to the sums of
  // the small and large pools' (saturating). The allocator model updates the aggregates'
  // current values and peaks as it goes and sums these when the statistics are read.
  void sumPools();
  // A periodic run (repeat.h): whether every statistic's current value is `earlier`'s; the growth
  // of the cumulative figures (allocated, freed, the num_* counts) since `earlier` (current and
  // peak 0); those figures grown by `growth` `times` times (saturating).
  [[nodiscard]] bool sameCurrentValues(const DeviceStats& earlier) const;
  [[nodiscard]] DeviceStats growthSince(const DeviceStats& earlier) const;
  void grow(const DeviceStats& growth, std::uint64_t times);
};

// The aggregate figures a replay reads after every request.
struct StatTotals {
  std::int64_t reserved = 0;
  std::int64_t allocated = 0;
  std::int64_t active = 0;
  std::int64_t requested = 0;
};

// The flat dict torch.cuda.memory_stats() returns ("allocated_bytes.all.peak" -> value).
std::map<std::string, std::int64_t> memoryStatsMap(const DeviceStats& stats);

// Every statistic that keeps a peak, in one fixed order: their memoryStatsMap keys
// ("allocation.all.peak", ...) and, for a DeviceStats, their peaks in that order.
inline constexpr std::size_t kPeakStats = 9 * kStatTypes + 2;
using PeakValues = std::array<std::int64_t, kPeakStats>;
const std::array<std::string, kPeakStats>& peakStatKeys();
PeakValues peaksOf(const DeviceStats& stats);

}  // namespace reservoir::sim
