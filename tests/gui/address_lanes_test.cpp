// The segment timeline's address stacking.
#include <gtest/gtest.h>

#include "geometry/address_lanes.h"

namespace reservoir::gui {
namespace {

TEST(AddressLanes, StacksInAddressOrderWithoutTheGaps) {
  // Out of order; 0x5000.. and 0x5100.. touch and 0x5080.. overlaps them: one lane.
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> in{
      {0x5100, 0x100}, {0x1000, 0x200}, {0x5000, 0x100}, {0x5080, 0x40}, {0x9000, 0}};
  const auto l = stackAddresses(in);
  ASSERT_EQ(l.lanes.size(), 2u);
  EXPECT_EQ(l.lanes[0].lo, 0x1000u);
  EXPECT_EQ(l.lanes[0].hi, 0x1200u);
  EXPECT_EQ(l.lanes[1].lo, 0x5000u);
  EXPECT_EQ(l.lanes[1].hi, 0x5200u);
  EXPECT_EQ(l.lanes[1].offset, 0x200u);
  EXPECT_EQ(l.total, 0x400u);
}

TEST(AddressLanes, PositionAndAddressAreInverse) {
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> in{{0x1000, 0x200}, {0x5000, 0x200}};
  const auto l = stackAddresses(in);
  EXPECT_EQ(l.position(0x1000), 0u);
  EXPECT_EQ(l.position(0x5010), 0x210u);
  EXPECT_FALSE(l.position(0x1200).has_value());  // between the lanes
  EXPECT_FALSE(l.position(0xfff).has_value());
  EXPECT_FALSE(l.position(0x5200).has_value());
  for (std::uint64_t pos : {0u, 0x1ffu, 0x200u, 0x3ffu}) EXPECT_EQ(l.position(*l.address(pos)), pos);
  EXPECT_FALSE(l.address(0x400).has_value());
}

TEST(AddressLanes, Empty) {
  const auto l = stackAddresses({});
  EXPECT_EQ(l.total, 0u);
  EXPECT_FALSE(l.address(0).has_value());
  EXPECT_FALSE(l.position(0).has_value());
}

}  // namespace
}  // namespace reservoir::gui
