// Curves drawn straight into pixels: each column covers exactly the run from the value entering
// it through its extremes, nothing else is touched, dashes keep to that run, clipping is safe.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "geometry/curve_raster.h"

namespace reservoir::gui {
namespace {

constexpr std::uint32_t kBackground = 0xff000000u, kInk = 0xffff0000u;

struct Canvas {
  int width, height, stride;
  std::vector<std::uint32_t> pixels;  // with a guard row above and below
  Canvas(int w, int h)
      : width(w), height(h), stride(w + 3), pixels(static_cast<std::size_t>((h + 2) * (w + 3)), kBackground) {}
  std::uint32_t* origin() { return pixels.data() + stride; }
  [[nodiscard]] bool inked(int x, int y) const {
    return pixels[static_cast<std::size_t>((y + 1) * stride + x)] == kInk;
  }
  [[nodiscard]] std::size_t inkCount() const {
    return static_cast<std::size_t>(std::count(pixels.begin(), pixels.end(), kInk));
  }
};

std::vector<ColumnEnvelope> randomCurve(std::mt19937_64& rng, int columns, std::int64_t top) {
  std::uniform_int_distribution<std::int64_t> v(-top / 10, top + top / 10);  // some outside the axis
  std::vector<ColumnEnvelope> out(static_cast<std::size_t>(columns));
  for (auto& c : out) {
    c.valid = rng() % 9 != 0;
    std::int64_t a = v(rng), b = v(rng), l = v(rng);
    c.min = std::min({a, b, l});
    c.max = std::max({a, b, l});
    c.last = l;
  }
  return out;
}

// The rows each column must cover, computed the plain way.
std::set<int> expectedRows(const std::vector<ColumnEnvelope>& cols, std::size_t c, const Axis& y, int h,
                           int thickness) {
  std::set<int> rows;
  const auto& e = cols[c];
  if (!e.valid) return rows;
  int top = curveRow(y, e.max, h), bottom = curveRow(y, e.min, h);
  if (c > 0 && cols[c - 1].valid) {
    const int prev = curveRow(y, cols[c - 1].last, h);
    top = std::min(top, prev);
    bottom = std::max(bottom, prev);
  }
  for (int r = std::max(top - (thickness - 1), 0); r <= bottom; ++r) rows.insert(r);
  return rows;
}

TEST(CurveRaster, SolidCoversExactlyTheRunOfEveryColumn) {
  std::mt19937_64 rng(7);
  for (int thickness : {1, 2, 3}) {
    const int w = 300, h = 120;
    const auto cols = randomCurve(rng, w + 20, 1000);  // longer than the canvas: cut at w
    const Axis y{0, 1000, static_cast<double>(h), 0};
    Canvas canvas(w, h);
    rasterizeCurve(cols, y, canvas.origin(), w, h, canvas.stride, CurveStyle{kInk, thickness, 0, 0});
    std::size_t expected_total = 0;
    for (int x = 0; x < w; ++x) {
      const auto rows = expectedRows(cols, static_cast<std::size_t>(x), y, h, thickness);
      expected_total += rows.size();
      for (int r = 0; r < h; ++r) ASSERT_EQ(canvas.inked(x, r), rows.count(r) == 1) << "column " << x << " row " << r;
    }
    EXPECT_EQ(canvas.inkCount(), expected_total);  // guard rows and the stride padding untouched
  }
}

TEST(CurveRaster, DashesStayOnTheRunAndLeaveGaps) {
  std::mt19937_64 rng(11);
  const int w = 400, h = 200;
  const auto cols = randomCurve(rng, w, 5000);
  const Axis y{0, 5000, static_cast<double>(h), 0};
  Canvas solid(w, h), dashed(w, h);
  rasterizeCurve(cols, y, solid.origin(), w, h, solid.stride, CurveStyle{kInk, 1, 0, 0});
  rasterizeCurve(cols, y, dashed.origin(), w, h, dashed.stride, CurveStyle{kInk, 1, 3, 3});
  for (int x = 0; x < w; ++x)
    for (int r = 0; r < h; ++r)
      if (dashed.inked(x, r)) {
        ASSERT_TRUE(solid.inked(x, r)) << x << "," << r;
      }
  // Three on, three off along the path: about half of it.
  const double share = static_cast<double>(dashed.inkCount()) / static_cast<double>(solid.inkCount());
  EXPECT_NEAR(share, 0.5, 0.05);
}

TEST(CurveRaster, AFlatCurveIsOneRowAndAStepIsOneVerticalRun) {
  const int w = 10, h = 100;
  const Axis y{0, 100, static_cast<double>(h), 0};
  std::vector<ColumnEnvelope> cols(10);
  for (std::size_t c = 0; c < cols.size(); ++c) {
    const std::int64_t v = c < 5 ? 20 : 70;
    cols[c] = ColumnEnvelope{v, v, v, 0, true};
  }
  Canvas canvas(w, h);
  rasterizeCurve(cols, y, canvas.origin(), w, h, canvas.stride, CurveStyle{kInk, 1, 0, 0});
  const int low = curveRow(y, 20, h), high = curveRow(y, 70, h);
  EXPECT_EQ(low, 80);
  EXPECT_EQ(high, 30);
  for (int x = 0; x < 5; ++x) EXPECT_TRUE(canvas.inked(x, low));
  for (int r = high; r <= low; ++r) EXPECT_TRUE(canvas.inked(5, r)) << r;              // the step
  EXPECT_EQ(canvas.inkCount(), 5u + (static_cast<std::size_t>(low - high) + 1) + 4u);  // columns 0-4, 5, 6-9
}

}  // namespace
}  // namespace reservoir::gui
