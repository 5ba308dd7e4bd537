#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "geometry/bands.h"
#include "geometry/lod.h"

namespace reservoir::gui {
namespace {

// A random trace of allocations and frees, with its lifetimes and live series.
struct FakeTrace {
  std::vector<std::uint32_t> begin, end, event_allocation;
  std::vector<std::uint64_t> size;
  std::vector<std::int64_t> live;
  LifetimeView view() const { return {begin, end, size, event_allocation, live}; }
};

FakeTrace makeTrace(std::size_t events, unsigned seed) {
  std::mt19937 rng(seed);
  FakeTrace t;
  std::vector<std::uint32_t> alive;
  std::int64_t live = 0;
  for (std::uint32_t e = 0; e < events; ++e) {
    if (!alive.empty() && rng() % 2 == 0) {
      const auto k = rng() % alive.size();
      const auto a = alive[k];
      alive.erase(alive.begin() + static_cast<std::ptrdiff_t>(k));
      t.end[a] = e;
      live -= static_cast<std::int64_t>(t.size[a]);
      t.event_allocation.push_back(a);
    } else {
      const auto a = static_cast<std::uint32_t>(t.size.size());
      t.begin.push_back(e);
      t.end.push_back(static_cast<std::uint32_t>(events));
      t.size.push_back(1u << (rng() % 20));
      alive.push_back(a);
      live += static_cast<std::int64_t>(t.size.back());
      t.event_allocation.push_back(a);
    }
    t.live.push_back(live);
  }
  return t;
}

TEST(Bands, EveryByteIsAccountedForInEveryColumn) {
  const auto t = makeTrace(20000, 3);
  MinMaxPyramid live(t.live);
  for (double zoom : {1.0, 0.1, 0.001}) {
    Axis x{5000, 5000 + 20000 * zoom, 0, 400};
    x.d1 = std::min(x.d1, 20000.0);
    auto cols = eventColumns(x, t.live.size(), 400);
    auto env = envelope(live, cols);
    auto rep = representativeEvents(env, cols);
    for (std::int64_t threshold : {1, 1 << 10, 1 << 18}) {
      auto bands = computeBands(t.view(), rep, threshold);
      for (std::size_t c = 0; c < cols.size(); ++c) {
        if (rep[c] == ColumnRange::kNone) continue;
        const auto spans = bands.column(c);
        std::int64_t top = 0;
        for (const auto& s : spans) {
          EXPECT_EQ(s.lo, top);
          top = s.hi;
          if (s.allocation != kMergedBand) {
            EXPECT_GE(static_cast<std::int64_t>(t.size[s.allocation]), threshold);
          }
        }
        EXPECT_EQ(top, t.live[rep[c]]) << "column " << c;
      }
    }
  }
}

TEST(Bands, SweepEqualsAFreshScan) {
  const auto t = makeTrace(5000, 11);
  std::vector<std::uint32_t> rep;
  for (std::uint32_t e = 0; e < 5000; e += 7) rep.push_back(e);
  auto swept = computeBands(t.view(), rep, 1 << 12);
  for (std::size_t c = 0; c < rep.size(); c += 50) {
    std::vector<std::uint32_t> one{rep[c]};
    auto fresh = computeBands(t.view(), one, 1 << 12);
    ASSERT_EQ(fresh.column(0).size(), swept.column(c).size());
    for (std::size_t k = 0; k < fresh.column(0).size(); ++k)
      EXPECT_EQ(fresh.column(0)[k].allocation, swept.column(c)[k].allocation);
  }
}

TEST(Bands, SizeClassesSkipSmallEventsWithoutChangingTheResult) {
  const auto t = makeTrace(8000, 5);
  const auto classes = eventSizeClasses(t.event_allocation, t.size);
  LifetimeView fast = t.view();
  fast.event_size_class = classes;
  std::vector<std::uint32_t> rep;
  for (std::uint32_t e = 0; e < 8000; e += 13) rep.push_back(e);
  for (std::int64_t threshold : {1, 1000, 1 << 15, 1 << 19}) {
    const auto a = computeBands(t.view(), rep, threshold);
    const auto b = computeBands(fast, rep, threshold);
    ASSERT_EQ(a.spans.size(), b.spans.size());
    for (std::size_t k = 0; k < a.spans.size(); ++k) EXPECT_EQ(a.spans[k].allocation, b.spans[k].allocation);
  }
}

TEST(Bands, RepresentativeIsTheColumnPeak) {
  FakeTrace t;
  // alloc 0 (8 bytes) at 0, alloc 1 (100) at 1, free 1 at 2.
  t.begin = {0, 1};
  t.end = {3, 2};
  t.size = {8, 100};
  t.event_allocation = {0, 1, 1};
  t.live = {8, 108, 8};
  MinMaxPyramid live(t.live);
  std::vector<ColumnRange> cols{{0, 3, ColumnRange::kNone}};
  auto env = envelope(live, cols);
  auto rep = representativeEvents(env, cols);
  EXPECT_EQ(rep[0], 1u);
  auto bands = computeBands(t.view(), rep, 1);
  ASSERT_EQ(bands.column(0).size(), 2u);
  EXPECT_EQ(hitBand(bands, 0, 50)->allocation, 1u);
  EXPECT_EQ(hitBand(bands, 0, 3)->allocation, 0u);
  EXPECT_EQ(hitBand(bands, 0, 500), nullptr);
}

TEST(Bands, RasterizeFillsTheColumnUpToTheTotal) {
  FakeTrace t;
  t.begin = {0};
  t.end = {1};
  t.size = {50};
  t.event_allocation = {0};
  t.live = {50};
  std::vector<std::uint32_t> rep{0, 0};
  auto bands = computeBands(t.view(), rep, 1);
  std::vector<std::uint32_t> px(2 * 100, 0);
  Axis y{0, 100, 100, 0};
  rasterizeBands(
      bands, y, px.data(), 2, 100, 2, [](std::uint32_t, const void*) { return 0xff00ff00u; }, nullptr);
  EXPECT_EQ(px[99 * 2], 0xff00ff00u);  // bottom row filled
  EXPECT_EQ(px[10 * 2], 0u);           // above 50 bytes: empty
  EXPECT_NE(px[50 * 2], 0u);           // the top edge
}

TEST(Palette, StableAndOpaque) {
  EXPECT_EQ(paletteColour(42), paletteColour(42));
  EXPECT_NE(paletteColour(1), paletteColour(2));
  EXPECT_EQ(paletteColour(7) >> 24, 0xffu);
}

}  // namespace
}  // namespace reservoir::gui
