// RecipeBytes must read a recipe the way libFuzzer's FuzzedDataProvider does, or the committed
// what-if corpus means other recipes in the corpus replay than in the fuzzer that found them.
// The expected values are worked out by hand from the rule in recipe_bytes.h.
#include "recipe_bytes.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <limits>

namespace reservoir::fuzz {
namespace {

TEST(RecipeBytes, IntegersComeFromTheEndOneBytePerEightBitsOfRange) {
  const std::array<std::uint8_t, 4> b{0x01, 0x02, 0x03, 0x0d};
  RecipeBytes in(b.data(), b.size());
  EXPECT_EQ(in.ConsumeIntegralInRange<int>(0, 8), 4);  // 0x0d = 13, 13 mod 9
  EXPECT_EQ(in.remaining_bytes(), 3u);
  EXPECT_EQ(in.ConsumeIntegral<std::uint16_t>(), 0x0302);  // 0x03 first, then 0x02
  EXPECT_TRUE(in.ConsumeBool());                           // 0x01
  EXPECT_EQ(in.remaining_bytes(), 0u);
  EXPECT_EQ(in.ConsumeIntegralInRange<int>(5, 9), 5);  // nothing left: the minimum
  EXPECT_FALSE(in.ConsumeBool());
}

TEST(RecipeBytes, ARangeTakesOnlyTheBytesItNeeds) {
  const std::array<std::uint8_t, 3> b{0xaa, 0x01, 0x02};
  RecipeBytes in(b.data(), b.size());
  EXPECT_EQ(in.ConsumeIntegralInRange<std::uint64_t>(0, 300), (0x0201u % 301));  // two bytes for 300
  EXPECT_EQ(in.remaining_bytes(), 1u);
  EXPECT_EQ(in.ConsumeIntegralInRange<std::uint64_t>(7, 7), 7u);  // an empty range takes none
  EXPECT_EQ(in.remaining_bytes(), 1u);
}

TEST(RecipeBytes, SignedRangesWrapFromTheirMinimum) {
  const std::array<std::uint8_t, 3> b{0x00, 0x00, 0x05};
  RecipeBytes in(b.data(), b.size());
  // Range 2^23 needs three bytes: 0x050000 = 327680, from -(4 << 20).
  EXPECT_EQ(in.ConsumeIntegralInRange<std::int64_t>(-(4 << 20), 4 << 20), -(4 << 20) + 327680);
}

TEST(RecipeBytes, FractionsAreAFullWidthIntegerOverItsMaximum) {
  std::array<std::uint8_t, 8> ones{};
  ones.fill(0xff);
  RecipeBytes all(ones.data(), ones.size());
  EXPECT_EQ(all.ConsumeProbability<double>(), 1.0);
  const std::array<std::uint8_t, 4> half{0x00, 0x00, 0x00, 0x80};  // 0x80000000 as a float's uint32
  RecipeBytes in(half.data(), half.size());
  EXPECT_FLOAT_EQ(in.ConsumeProbability<float>(),
                  static_cast<float>(0x80000000u) / static_cast<float>(std::numeric_limits<std::uint32_t>::max()));
  RecipeBytes none(nullptr, 0);
  EXPECT_EQ(none.ConsumeProbability<double>(), 0.0);
}

TEST(RecipeBytes, AnyFloatTakesAHalfThenAFraction) {
  RecipeBytes none(nullptr, 0);
  EXPECT_EQ(none.ConsumeFloatingPoint<double>(), std::numeric_limits<double>::lowest());
  std::array<std::uint8_t, 9> top{};
  top.fill(0xff);  // the last byte: upper half; the eight before it: fraction 1
  RecipeBytes in(top.data(), top.size());
  EXPECT_EQ(in.ConsumeFloatingPoint<double>(), std::numeric_limits<double>::max());
}

}  // namespace
}  // namespace reservoir::fuzz
