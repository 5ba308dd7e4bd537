#include <gtest/gtest.h>

#include <vector>

#include "geometry/segment_layout.h"

namespace reservoir::gui {
namespace {

TEST(SegmentLayout, FitsTheScaleInTheRows) {
  std::vector<std::uint64_t> sizes{1000, 3000, 6000};
  auto l = layoutSegments(sizes, 100, 4, 10000, 2);
  EXPECT_LE(l.rows, 4);
  EXPECT_GT(l.bytes_per_px, 0);
  EXPECT_DOUBLE_EQ(l.start[0], 0);
  EXPECT_NEAR(l.start[1], 1000 / l.bytes_per_px + 2, 1e-9);
}

TEST(SegmentLayout, PiecesWrapAtRowEnds) {
  SegmentLayout l;
  l.width = 100;
  auto p = l.pieces(90, 230);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].row, 0);
  EXPECT_DOUBLE_EQ(p[0].x0, 90);
  EXPECT_DOUBLE_EQ(p[0].x1, 100);
  EXPECT_EQ(p[2].row, 2);
  EXPECT_DOUBLE_EQ(p[2].x1, 30);
}

TEST(SegmentLayout, HitFindsSegmentAndOffsetAndMissesGaps) {
  std::vector<std::uint64_t> sizes{100, 100};
  auto l = layoutSegments(sizes, 50, 10, 200, 10);
  SegmentLayout::Hit h;
  ASSERT_TRUE(l.hit(0, 1, h));
  EXPECT_EQ(h.segment, 0u);
  const double second = l.start[1] + 1;
  ASSERT_TRUE(l.hit(static_cast<int>(second / 50), second - 50 * static_cast<int>(second / 50), h));
  EXPECT_EQ(h.segment, 1u);
  const double gap = l.start[1] - 5;
  EXPECT_FALSE(l.hit(static_cast<int>(gap / 50), gap - 50 * static_cast<int>(gap / 50), h));
}

TEST(SegmentLayout, BlockAt) {
  std::vector<std::uint64_t> offs{0, 512, 2048}, sizes{512, 1024, 512};
  EXPECT_EQ(blockAt(offs, sizes, 0), 0);
  EXPECT_EQ(blockAt(offs, sizes, 1000), 1);
  EXPECT_EQ(blockAt(offs, sizes, 1600), -1);  // between blocks 1 and 2
  EXPECT_EQ(blockAt(offs, sizes, 2559), 2);
  EXPECT_EQ(blockAt(offs, sizes, 4000), -1);
}

}  // namespace
}  // namespace reservoir::gui
