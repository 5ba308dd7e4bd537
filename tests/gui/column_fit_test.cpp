// fitColumns: a compact table's columns share its width without a scroll bar.
#include <gtest/gtest.h>

#include <numeric>

#include "geometry/column_fit.h"

namespace reservoir::gui {
namespace {

int sum(const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 0); }

TEST(ColumnFit, ColumnsThatFitKeepTheirWidths) {
  EXPECT_EQ(fitColumns({80, 90, 60}, 300, 40), (std::vector<int>{80, 90, 60}));
  EXPECT_EQ(fitColumns({80, 90, 60}, 230, 40), (std::vector<int>{80, 90, 60}));
}

TEST(ColumnFit, TheWidestAreCappedAtOneLevel) {
  // A settings text makes two columns wide; the narrow "change" column keeps its width.
  const auto w = fitColumns({200, 210, 60}, 300, 40);
  EXPECT_EQ(w[2], 60);
  EXPECT_EQ(w[0], w[1]);
  EXPECT_LE(sum(w), 300);
  EXPECT_GE(sum(w), 299);  // the room is used
  const auto one = fitColumns({500, 70, 70}, 300, 40);
  EXPECT_EQ(one, (std::vector<int>{160, 70, 70}));
}

TEST(ColumnFit, NeverBelowTheFloor) {
  const auto w = fitColumns({200, 200, 200}, 60, 40);
  EXPECT_EQ(w, (std::vector<int>{40, 40, 40}));
  EXPECT_EQ(fitColumns({30, 200}, 50, 40), (std::vector<int>{30, 40})) << "a column under the floor keeps its width";
  EXPECT_TRUE(fitColumns({}, 100, 40).empty());
}

}  // namespace
}  // namespace reservoir::gui
