// fitColumns: a compact table's columns share its width without a scroll bar, headers readable.
#include <gtest/gtest.h>

#include <numeric>

#include "geometry/column_fit.h"

namespace reservoir::gui {
namespace {

int sum(const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 0); }

TEST(ColumnFit, ColumnsThatFitKeepTheirWidths) {
  EXPECT_EQ(fitColumns({80, 90, 60}, {40, 40, 40}, 300), (std::vector<int>{80, 90, 60}));
  EXPECT_EQ(fitColumns({80, 90, 60}, {40, 40, 40}, 230), (std::vector<int>{80, 90, 60}));
}

TEST(ColumnFit, TheWidestAreCappedAtOneLevel) {
  // A settings text makes two columns wide; the narrow "change" column keeps its width.
  const auto w = fitColumns({200, 210, 60}, {40, 40, 40}, 300);
  EXPECT_EQ(w, (std::vector<int>{120, 120, 60}));
  EXPECT_EQ(sum(w), 300);
  EXPECT_EQ(fitColumns({500, 70, 70}, {40, 40, 40}, 300), (std::vector<int>{160, 70, 70}));
}

TEST(ColumnFit, AHeaderIsAColumnsFloor) {
  // The third column's header needs 140: it keeps that, the others share the rest.
  const auto w = fitColumns({200, 200, 150}, {40, 40, 140}, 300);
  EXPECT_EQ(w[2], 140);
  EXPECT_EQ(w[0], 80);
  EXPECT_EQ(w[1], 80);
  // When even the floors do not fit, the floors (the table scrolls rather than cut a header).
  EXPECT_EQ(fitColumns({200, 200, 200}, {100, 100, 100}, 60), (std::vector<int>{100, 100, 100}));
  EXPECT_EQ(fitColumns({30, 200}, {40, 40}, 50), (std::vector<int>{30, 40})) << "a floor above the wanted width";
  EXPECT_TRUE(fitColumns({}, {}, 100).empty());
}

}  // namespace
}  // namespace reservoir::gui
