#include <gtest/gtest.h>

#include <vector>

#include "geometry/axis.h"

namespace reservoir::gui {
namespace {

TEST(Axis, MapsBothWays) {
  Axis a{0, 100, 10, 210};
  EXPECT_DOUBLE_EQ(a.toPixel(50), 110);
  EXPECT_DOUBLE_EQ(a.toDomain(110), 50);
  EXPECT_DOUBLE_EQ(a.unitsPerPixel(), 0.5);
  Axis y{0, 1000, 100, 0};  // y up
  EXPECT_DOUBLE_EQ(y.toPixel(0), 100);
  EXPECT_DOUBLE_EQ(y.toPixel(1000), 0);
}

TEST(Axis, ZoomKeepsTheAnchorAndClamps) {
  Axis a{0, 1000, 0, 100};
  Axis z = zoomAround(a, 50, 0.5, 0, 1000, 10);
  EXPECT_DOUBLE_EQ(z.d0, 250);
  EXPECT_DOUBLE_EQ(z.d1, 750);
  Axis out = zoomAround(z, 50, 10, 0, 1000, 10);
  EXPECT_DOUBLE_EQ(out.d0, 0);
  EXPECT_DOUBLE_EQ(out.d1, 1000);
  Axis tiny = zoomAround(a, 0, 1e-9, 0, 1000, 10);
  EXPECT_DOUBLE_EQ(tiny.d1 - tiny.d0, 10);
}

TEST(Axis, PanStaysInRange) {
  Axis a{100, 200, 0, 100};
  Axis p = panBy(a, 50, 0, 1000);  // drag right: earlier events
  EXPECT_DOUBLE_EQ(p.d0, 50);
  p = panBy(a, 1000, 0, 1000);
  EXPECT_DOUBLE_EQ(p.d0, 0);
  EXPECT_DOUBLE_EQ(p.d1, 100);
}

TEST(EventColumns, CoverEveryEventOnce) {
  Axis a{0, 1000, 0, 100};
  auto cols = eventColumns(a, 1000, 100);
  ASSERT_EQ(cols.size(), 100u);
  std::uint32_t next = 0;
  for (const auto& c : cols) {
    EXPECT_EQ(c.first, next);
    next = c.end;
  }
  EXPECT_EQ(next, 1000u);
  EXPECT_EQ(cols[0].carry, ColumnRange::kNone);
  EXPECT_EQ(cols[1].carry, 9u);
}

TEST(EventColumns, ZoomedInColumnsShowTheEventTheyLieIn) {
  Axis a{10, 12, 0, 100};  // 50 px per event
  auto cols = eventColumns(a, 1000, 100);
  EXPECT_EQ(cols[0].first, 10u);
  EXPECT_EQ(cols[0].end, 11u);
  EXPECT_EQ(cols[60].first, 11u);
  EXPECT_EQ(cols[60].last(), 11u);
}

TEST(TimeColumns, SplitByTime) {
  std::vector<std::int64_t> t{0, 0, 5, 10, 10, 30};
  Axis a{0, 40, 0, 4};  // 10 us per column
  auto cols = timeColumns(a, t, 4);
  EXPECT_EQ(cols[0].first, 0u);
  EXPECT_EQ(cols[0].end, 3u);  // times 0, 0, 5
  EXPECT_EQ(cols[1].end, 5u);  // 10, 10
  EXPECT_TRUE(cols[2].empty());
  EXPECT_EQ(cols[2].last(), 4u);  // the state of the last event before it
  EXPECT_EQ(cols[3].end, 6u);
}

TEST(Ticks, NiceAndBinary) {
  auto t = niceTicks(0, 100, 5);
  ASSERT_FALSE(t.empty());
  EXPECT_DOUBLE_EQ(t[1] - t[0], 20);
  auto b = byteTicks(0, 8.0 * (1ull << 30), 4);
  ASSERT_GE(b.size(), 2u);
  EXPECT_DOUBLE_EQ(b[1] - b[0], 2.0 * (1ull << 30));
}

}  // namespace
}  // namespace reservoir::gui
