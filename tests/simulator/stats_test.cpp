// The statistics' counters never overflow (the what-if fuzzer's finding: the cumulative
// allocated bytes of a few blocks near 2^62 passed 2^63, undefined behaviour in C++).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include <limits>

#include "reservoir/simulator/allocator.h"
#include "reservoir/simulator/stats.h"
#include "test_device.h"

namespace reservoir::sim {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kNearLimit = (std::int64_t{1} << 62) - 512;  // the largest size the reader accepts

TEST(Stats, CountersSaturateInsteadOfOverflowing) {
  Stat s;
  for (int i = 0; i < 3; ++i) s.increase(kNearLimit);  // 3 x 2^62 > 2^63
  EXPECT_EQ(s.current, kMax);
  EXPECT_EQ(s.peak, kMax);
  EXPECT_EQ(s.allocated, kMax);
  for (int i = 0; i < 4; ++i) s.decrease(kNearLimit);
  EXPECT_EQ(s.freed, kMax);
  EXPECT_LT(s.current, 0);  // below what was added: the saturated total is no longer exact
  EXPECT_EQ(s.peak, kMax);
}

TEST(Stats, OrdinaryAmountsAddExactly) {
  Stat s;
  s.increase(1000);
  s.increase(24);
  s.decrease(512);
  EXPECT_EQ(s.current, 512);
  EXPECT_EQ(s.peak, 1024);
  EXPECT_EQ(s.allocated, 1024);
  EXPECT_EQ(s.freed, 512);
  EXPECT_EQ(saturatingAdd(kMax, 1), kMax);
  EXPECT_EQ(saturatingAdd(std::numeric_limits<std::int64_t>::min(), -1), std::numeric_limits<std::int64_t>::min());
}

// The peaks read without stats() are memory_stats()'s `.peak` values, key for key: every
// statistic given a peak of its own, each found under its key and no `.peak` key missed.
TEST(Stats, PeaksOfAreTheMapsPeakValuesInTheKeysOrder) {
  DeviceStats s;
  std::int64_t next = 1;
  for (StatArray* a : {&s.allocation, &s.segment, &s.active, &s.inactive_split, &s.allocated_bytes, &s.reserved_bytes,
                       &s.active_bytes, &s.inactive_split_bytes, &s.requested_bytes})
    for (Stat& st : *a) st.peak = next++;
  s.oversize_allocations.peak = next++;
  s.oversize_segments.peak = next++;
  const auto map = memoryStatsMap(s);
  const auto peaks = peaksOf(s);
  const auto& keys = peakStatKeys();
  std::set<std::int64_t> seen(peaks.begin(), peaks.end());
  EXPECT_EQ(seen.size(), kPeakStats);  // every peak read once
  for (std::size_t i = 0; i < kPeakStats; ++i) {
    ASSERT_TRUE(map.count(keys[i])) << keys[i];
    EXPECT_EQ(map.at(keys[i]), peaks[i]) << keys[i];
  }
  const auto peak_keys =
      std::count_if(map.begin(), map.end(), [](const auto& kv) { return kv.first.ends_with(".peak"); });
  EXPECT_EQ(static_cast<std::size_t>(peak_keys), kPeakStats);
}

TEST(Stats, SumPoolsAddsTheCumulativeCountsAndLeavesCurrentAndPeak) {
  DeviceStats d;
  d.allocated_bytes[kSmallPool].allocated = 3;
  d.allocated_bytes[kLargePool].allocated = 4;
  d.allocated_bytes[kLargePool].freed = kMax;
  d.allocated_bytes[kSmallPool].freed = 1;
  d.allocated_bytes[kAggregate].current = 5;
  d.allocated_bytes[kAggregate].peak = 9;
  d.sumPools();
  EXPECT_EQ(d.allocated_bytes[kAggregate].allocated, 7);
  EXPECT_EQ(d.allocated_bytes[kAggregate].freed, kMax);  // saturates
  EXPECT_EQ(d.allocated_bytes[kAggregate].current, 5);
  EXPECT_EQ(d.allocated_bytes[kAggregate].peak, 9);
}

// The model updates the aggregates' current values and peaks as it goes and sums their
// cumulative counts when asked: stats() is what c10 would report, totals() its currents.
TEST(Stats, TheModelsAggregatesAreThePoolsTogether) {
  const AllocatorConfig config = *parseAllocConf("");
  test::TestDevice device;
  test::RecordingSink sink;
  CachingAllocator alloc(config, &device, &sink);
  alloc.setCheckLevel(CheckLevel::kExpensive);
  const auto small = alloc.malloc(1000, 0, 1);  // 1024 bytes in a 2 MiB small segment
  const auto large = alloc.malloc(4 * kMiB, 0, 2);
  ASSERT_TRUE(small.ok() && large.ok());
  alloc.free(small.block);
  const DeviceStats s = alloc.stats();
  const StatArray& a = s.allocated_bytes;
  EXPECT_EQ(a[kSmallPool].allocated, 1024);
  EXPECT_EQ(a[kLargePool].allocated, static_cast<std::int64_t>(4 * kMiB));
  EXPECT_EQ(a[kAggregate].allocated, a[kSmallPool].allocated + a[kLargePool].allocated);
  EXPECT_EQ(a[kAggregate].freed, 1024);
  EXPECT_EQ(a[kAggregate].current, static_cast<std::int64_t>(4 * kMiB));
  EXPECT_EQ(a[kAggregate].peak, static_cast<std::int64_t>(4 * kMiB + 1024));
  EXPECT_EQ(s.reserved_bytes[kAggregate].current,
            static_cast<std::int64_t>(2 * kMiB + 20 * kMiB));  // a 20 MiB large buffer
  const StatTotals t = alloc.totals();
  EXPECT_EQ(t.reserved, s.reserved_bytes[kAggregate].current);
  EXPECT_EQ(t.allocated, a[kAggregate].current);
  EXPECT_EQ(t.active, s.active_bytes[kAggregate].current);
  EXPECT_EQ(t.requested, static_cast<std::int64_t>(4 * kMiB));
  EXPECT_EQ(alloc.invariantFailure(), "");
}

}  // namespace
}  // namespace reservoir::sim
