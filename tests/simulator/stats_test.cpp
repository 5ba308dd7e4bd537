// The statistics' counters never overflow (the what-if fuzzer's finding: the cumulative
// allocated bytes of a few blocks near 2^62 passed 2^63, undefined behaviour in C++).
#include <gtest/gtest.h>

#include <limits>

#include "reservoir/simulator/stats.h"

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

}  // namespace
}  // namespace reservoir::sim
