// CompactSeries: every value read back as pushed, at every width of a block, and its memory.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "reservoir/core/compact_series.h"

namespace reservoir {
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

TEST(CompactSeries, SmallStepsTakeTheBitsTheyNeed) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < 64000; ++i) v.push_back((std::int64_t{40} << 30) + (i % 1000) * 512);
  const CompactSeries s(v);
  // Offsets below 1000 units of 512: 10 bits a value and 16 bytes a block, vs 8 bytes a value.
  EXPECT_LE(s.memoryBytes(), v.size() * 10 / 8 + v.size() / 64 * 16 + 1024);
  EXPECT_EQ(s[63999], v[63999]);
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(s[i], v[i]) << i;
}

// Times: nondecreasing microseconds a few apart take a byte a value or less.
TEST(CompactSeries, NearbyTimesTakeAboutAByteAValue) {
  std::mt19937_64 rng(3);
  std::vector<std::int64_t> v;
  std::int64_t t = 1'700'000'000'000'000;
  for (std::size_t i = 0; i < 64000; ++i) v.push_back(t += static_cast<std::int64_t>(rng() % 3));
  const CompactSeries s(v);
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(s[i], v[i]) << i;
  EXPECT_LE(s.memoryBytes(), v.size() + v.size() / 64 * 16 + 1024);
}

// Every width from a block of equal values (no bits) to whole 64-bit values reads back, at every
// position of its block (a value's bits straddle bytes at most widths).
TEST(CompactSeries, EveryWidthReadsBack) {
  std::mt19937_64 rng(5);
  std::vector<std::int64_t> v;
  for (unsigned bits = 0; bits <= 64; ++bits) {
    const std::uint64_t top = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
    for (std::size_t k = 0; k < CompactSeries::kBlock; ++k) {
      const std::uint64_t offset = k == 7 ? top : (bits == 0 ? 0 : rng() & top);  // the widest in each block
      v.push_back(
          static_cast<std::int64_t>(static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::min()) + offset));
    }
  }
  const CompactSeries s(v);
  ASSERT_EQ(s.size(), v.size());
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(s[i], v[i]) << "block " << i / 64 << " value " << i % 64;
}

// The allocator's byte counts move in blocks of 512: a block of them that jumps by gigabytes keeps
// its offsets in units of a power of two, 9 bits fewer than in bytes.
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
  // Blocks span up to 2 x 10 GiB plus the steps: at most 27 bits in units of 512.
  EXPECT_LE(s.memoryBytes(), v.size() * 27 / 8 + v.size() / 64 * 16 + 1024);
  // Odd steps among them leave no common unit: such blocks take 9 bits a value more, and read back.
  std::vector<std::int64_t> odd = v;
  for (std::size_t i = 5; i < odd.size(); i += 64) odd[i] += 1;
  const CompactSeries t(odd);
  for (std::size_t i = 0; i < odd.size(); ++i) ASSERT_EQ(t[i], odd[i]) << i;
  EXPECT_GE(t.memoryBytes(), s.memoryBytes() + odd.size() * 9 / 8);
}

}  // namespace
}  // namespace reservoir
