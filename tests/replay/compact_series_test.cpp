// CompactSeries: every value read back as pushed, narrow and wide blocks alike, and its memory.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "reservoir/replay/compact_series.h"

namespace reservoir::replay {
namespace {

// Values as a series of live bytes moves: mostly small steps, now and then a jump past 32 bits.
std::vector<std::int64_t> walk(std::size_t n, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> v;
  std::int64_t x = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto r = rng() % 100;
    if (r == 0) x += std::int64_t{5} << 31;        // a 10 GiB mapping: its block is kept whole
    else if (r == 1) x -= std::int64_t{5} << 31;
    else x += static_cast<std::int64_t>(rng() % (1u << 22)) - (1 << 21);
    v.push_back(x);
  }
  return v;
}

TEST(CompactSeries, ReadsBackEveryValueInEveryBlockKind) {
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{65},
                              std::size_t{10000}}) {
    const auto v = walk(n, static_cast<std::uint32_t>(n));
    const CompactSeries s(v);
    ASSERT_EQ(s.size(), n);
    EXPECT_EQ(s.empty(), n == 0);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(s[i], v[i]) << "n " << n << " index " << i;
    if (n) EXPECT_EQ(s.back(), v.back());
    EXPECT_EQ(s.values(), v);
  }
}

TEST(CompactSeries, ExtremesThatOverflowAnOffsetAreKeptWhole) {
  const std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
  std::vector<std::int64_t> v(200, 0);
  v[3] = hi;
  v[70] = lo;
  v[130] = std::int64_t{1} << 31;  // one past int32
  v[131] = -(std::int64_t{1} << 31);  // int32's least: fits
  const CompactSeries s(v);
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(s[i], v[i]) << i;
}

TEST(CompactSeries, AppendingPiecesEqualsPushingAll) {
  const auto v = walk(1000, 7);
  CompactSeries whole(v), pieces, piece;
  for (std::size_t i = 0; i < v.size(); ++i) {
    piece.push_back(v[i]);
    if (i % 97 == 0 || i + 1 == v.size()) {  // pieces that do not end on a block
      pieces.append(piece);
      piece.clear();
    }
  }
  EXPECT_TRUE(pieces == whole);
  EXPECT_EQ(pieces.values(), v);
}

TEST(CompactSeries, SmallStepsTakeAboutFourBytesAValue) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < 64000; ++i) v.push_back((std::int64_t{40} << 30) + (i % 1000) * 512);
  const CompactSeries s(v);
  EXPECT_LE(s.memoryBytes(), v.size() * 9 / 2);  // 4 bytes a value and 16 a block, vs 8 a value
  EXPECT_EQ(s[63999], v[63999]);
}

// The allocator's byte counts move in blocks of 512: a block of them that jumps by gigabytes keeps
// its offsets in units of a power of two (4 bytes a value), not whole (8 more).
TEST(CompactSeries, OffsetsInACommonUnitStayNarrow) {
  std::mt19937_64 rng(11);
  std::vector<std::int64_t> v;
  std::int64_t x = std::int64_t{3} << 40;
  for (std::size_t i = 0; i < 64000; ++i) {
    const auto r = rng() % 10;
    if (r == 0)
      x += std::int64_t{5} << 31;  // 10 GiB up or down, in a block most of the time
    else if (r == 1)
      x -= std::int64_t{5} << 31;
    else
      x += (static_cast<std::int64_t>(rng() % 4096) - 2048) * 512;
    v.push_back(x);
  }
  const CompactSeries s(v);
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(s[i], v[i]) << i;
  EXPECT_LE(s.memoryBytes(), v.size() * 9 / 2);
  // Odd steps among them leave no common unit: such blocks are kept whole, and read back too.
  std::vector<std::int64_t> odd = v;
  for (std::size_t i = 5; i < odd.size(); i += 64) odd[i] += 1;
  const CompactSeries t(odd);
  for (std::size_t i = 0; i < odd.size(); ++i) ASSERT_EQ(t[i], odd[i]) << i;
  EXPECT_GT(t.memoryBytes(), odd.size() * 9 / 2);
}

}  // namespace
}  // namespace reservoir::replay
