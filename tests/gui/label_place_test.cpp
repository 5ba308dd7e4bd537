// The placement of point labels (the comparison's two peak labels).
#include <gtest/gtest.h>

#include "geometry/label_place.h"

namespace reservoir::gui {
namespace {

const LabelBox kBounds{0, 0, 400, 200};

TEST(LabelPlace, PreferredSideRightOfThePoint) {
  const LabelRequest a{100, 100, 60, 14, false}, b{300, 100, 60, 14, true};
  const std::vector<LabelRequest> in{a, b};
  const auto out = placeLabels(in, kBounds, 8);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_DOUBLE_EQ(out[0].x, 108);
  EXPECT_DOUBLE_EQ(out[0].bottom(), 92);  // above
  EXPECT_DOUBLE_EQ(out[1].x, 308);
  EXPECT_DOUBLE_EQ(out[1].y, 108);  // below
}

TEST(LabelPlace, LeftOfAPointNearTheRightEdge) {
  const std::vector<LabelRequest> in{{390, 100, 60, 14, false}};
  const auto out = placeLabels(in, kBounds, 8);
  EXPECT_DOUBLE_EQ(out[0].x, 390 - 8 - 60);
}

TEST(LabelPlace, TwoPeaksAtOnePointDoNotOverlap) {
  // Both prefer above: the second takes another place.
  const std::vector<LabelRequest> in{{200, 100, 90, 14, false}, {200, 100, 90, 14, false}};
  const auto out = placeLabels(in, kBounds, 8);
  EXPECT_FALSE(out[0].overlaps(out[1]));
}

TEST(LabelPlace, CloseWideLabelsInACrowdedCornerStack) {
  // Labels wider than half the plot at the top-right corner: no place beside the point is free
  // for the second; it goes under the first, inside the bounds.
  const LabelBox narrow{0, 0, 300, 100};
  const std::vector<LabelRequest> in{{290, 2, 200, 14, false}, {292, 3, 200, 14, false}, {291, 4, 200, 14, false}};
  const auto out = placeLabels(in, narrow, 8);
  for (std::size_t i = 0; i < out.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_GE(out[i].x, 0);
    EXPECT_LE(out[i].right(), 300);
    EXPECT_GE(out[i].y, 0);
    EXPECT_LE(out[i].bottom(), 100);
    for (std::size_t j = 0; j < i; ++j) EXPECT_FALSE(out[i].overlaps(out[j])) << j;
  }
}

TEST(LabelPlace, StaysInsideTheBounds) {
  const std::vector<LabelRequest> in{{5, 3, 60, 14, false}, {5, 198, 60, 14, true}};
  const auto out = placeLabels(in, kBounds, 8);
  for (const auto& b : out) {
    EXPECT_GE(b.y, 0);
    EXPECT_LE(b.bottom(), 200);
    EXPECT_GE(b.x, 0);
  }
}

TEST(LabelPlace, Overlap) {
  EXPECT_TRUE((LabelBox{0, 0, 10, 10}.overlaps({5, 5, 10, 10})));
  EXPECT_FALSE((LabelBox{0, 0, 10, 10}.overlaps({10, 0, 10, 10})));  // touching is not overlapping
}

}  // namespace
}  // namespace reservoir::gui
