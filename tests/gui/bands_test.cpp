#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "geometry/band_colouring.h"
#include "geometry/bands.h"
#include "geometry/lod.h"

namespace reservoir::gui {
namespace {

// A random trace of allocations and frees, with its lifetimes and live series.
struct FakeTrace {
  std::vector<std::uint32_t> begin, end, event_allocation;
  std::vector<std::uint64_t> size;
  CompactSeries live;
  std::vector<StackId> stack;              // per allocation: one of 8 stacks, or none
  std::vector<std::uint32_t> stack_first;  // per stack
  // The lifetimes as the request stream holds them (what a LifetimeView reads), made from the
  // columns above; remade only when those changed, so an earlier view stays valid.
  mutable std::vector<traces::Allocation> allocations;
  mutable std::vector<AllocationId> ids;
  LifetimeView view() const {
    std::vector<traces::Allocation> as(begin.size());
    for (std::size_t a = 0; a < as.size(); ++a) {
      as[a].alloc_event = begin[a];
      as[a].free_completed_event = end[a];
      as[a].size = size[a];
      as[a].stack = a < stack.size() ? stack[a] : StackId{};
    }
    if (!std::equal(as.begin(), as.end(), allocations.begin(), allocations.end(), [](const auto& x, const auto& y) {
          return x.alloc_event == y.alloc_event && x.free_completed_event == y.free_completed_event &&
                 x.size == y.size && x.stack == y.stack;
        }))
      allocations = std::move(as);
    std::vector<AllocationId> is;
    for (const std::uint32_t a : event_allocation) is.push_back(AllocationId(a));
    if (is != ids) ids = std::move(is);
    return {allocations, ids, static_cast<std::uint32_t>(live.size()), &live};
  }
  std::vector<std::uint8_t> classes;       // eventSizeClasses
  LifetimeView viewWithStacks() const {
    LifetimeView v = view();
    v.stack_first = stack_first;
    return v;
  }
  // With the size classes the GUI gives the sweep.
  LifetimeView fastView(bool stacks) const {
    LifetimeView v = stacks ? viewWithStacks() : view();
    v.event_size_class = classes;
    return v;
  }
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
      const auto k = rng() % 9;
      t.stack.push_back(k == 8 ? StackId{} : StackId{static_cast<std::uint32_t>(k)});
      alive.push_back(a);
      live += static_cast<std::int64_t>(t.size.back());
      t.event_allocation.push_back(a);
    }
    t.live.push_back(live);
  }
  t.stack_first = firstAllocationOfStacks(t.view().allocations, 8);
  t.classes = eventSizeClasses(t.view());
  return t;
}

// Events 0, step, 2 step, ... below `events`: the columns of a test.
std::vector<std::uint32_t> everyNth(std::uint32_t events, std::uint32_t step) {
  std::vector<std::uint32_t> rep;
  for (std::uint32_t e = 0; e < events; e += step) rep.push_back(e);
  return rep;
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
  const auto rep = everyNth(5000, 7);
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
  const LifetimeView fast = t.fastView(false);
  const auto rep = everyNth(8000, 13);
  for (std::int64_t threshold : {1, 1000, 1 << 15, 1 << 19}) {
    const auto a = computeBands(t.view(), rep, threshold);
    const auto b = computeBands(fast, rep, threshold);
    ASSERT_EQ(a.spans.size(), b.spans.size());
    for (std::size_t k = 0; k < a.spans.size(); ++k) EXPECT_EQ(a.spans[k].allocation, b.spans[k].allocation);
  }
}

// Columns of a view with stacks: every byte counted once; a stack band holds exactly that
// stack's live blocks in [floor, threshold), at least `threshold` of them, in two or more
// blocks; the grey band the rest.
TEST(Bands, SmallBlocksAreSummedPerStack) {
  const auto t = makeTrace(6000, 7);
  const auto rep = everyNth(6000, 29);
  std::size_t stack_bands = 0;
  for (std::int64_t threshold : {1 << 12, 1 << 16, 1 << 19}) {
    const auto bands = computeBands(t.viewWithStacks(), rep, threshold);
    EXPECT_EQ(bands.stack_floor, stackFloor(threshold));
    for (std::size_t c = 0; c < rep.size(); ++c) {
      const std::uint32_t e = rep[c];
      // The sums by brute force.
      std::vector<std::int64_t> bytes(8, 0);
      std::vector<std::uint32_t> blocks(8, 0);
      for (std::uint32_t a = 0; a < t.size.size(); ++a) {
        const auto size = static_cast<std::int64_t>(t.size[a]);
        if (t.begin[a] <= e && e < t.end[a] && t.stack[a].valid() && size < threshold && size >= bands.stack_floor) {
          bytes[t.stack[a].value()] += size;
          ++blocks[t.stack[a].value()];
        }
      }
      std::int64_t top = 0;
      std::vector<bool> seen(8, false);
      std::uint32_t last_first = 0;
      for (const auto& s : bands.column(c)) {
        EXPECT_EQ(s.lo, top);
        top = s.hi;
        if (s.blocks <= 1) continue;
        ++stack_bands;
        const auto k = t.stack[s.allocation].value();
        EXPECT_EQ(t.stack_first[k], s.allocation);
        EXPECT_FALSE(seen[k]);
        seen[k] = true;
        EXPECT_GE(s.allocation, last_first) << "stack bands in the order of their first allocation";
        last_first = s.allocation;
        EXPECT_EQ(s.hi - s.lo, bytes[k]);
        EXPECT_EQ(s.blocks, blocks[k]);
        EXPECT_GE(s.hi - s.lo, threshold);
      }
      for (std::uint32_t k = 0; k < 8; ++k) EXPECT_EQ(seen[k], bytes[k] >= threshold) << "stack " << k;
      EXPECT_EQ(top, t.live[e]) << "column " << c;
    }
  }
  EXPECT_GT(stack_bands, 50u);  // the case is exercised (90 columns)
}

TEST(Bands, SweepEqualsAFreshScanWithStacks) {
  const auto t = makeTrace(5000, 13);
  const LifetimeView fast = t.fastView(true);
  const auto rep = everyNth(5000, 7);
  for (std::int64_t threshold : {1 << 10, 1 << 17}) {
    const auto swept = computeBands(fast, rep, threshold);
    for (std::size_t c = 0; c < rep.size(); c += 37) {
      std::vector<std::uint32_t> one{rep[c]};
      const auto fresh = computeBands(t.viewWithStacks(), one, threshold);
      ASSERT_EQ(fresh.column(0).size(), swept.column(c).size());
      for (std::size_t k = 0; k < fresh.column(0).size(); ++k) {
        EXPECT_EQ(fresh.column(0)[k].allocation, swept.column(c)[k].allocation);
        EXPECT_EQ(fresh.column(0)[k].blocks, swept.column(c)[k].blocks);
        EXPECT_EQ(fresh.column(0)[k].hi, swept.column(c)[k].hi);
      }
    }
  }
}

// What train150 showed: a stack's many small blocks filled the grey band. They get a band
// in that stack's colour; blocks under the floor, and blocks with no stack, stay grey.
TEST(Bands, AStacksManySmallBlocksGetABand) {
  FakeTrace t;
  std::int64_t live = 0;
  auto allocate = [&](std::uint64_t size, StackId stack) {
    const auto a = static_cast<std::uint32_t>(t.size.size());
    t.begin.push_back(static_cast<std::uint32_t>(t.event_allocation.size()));
    t.end.push_back(1000);
    t.size.push_back(size);
    t.stack.push_back(stack);
    t.event_allocation.push_back(a);
    live += static_cast<std::int64_t>(size);
    t.live.push_back(live);
  };
  allocate(1 << 20, StackId{1});                                  // a big block
  for (int i = 0; i < 100; ++i) allocate(1 << 10, StackId{0});    // 100 KiB in small blocks
  for (int i = 0; i < 50; ++i) allocate(1 << 10, StackId{});      // no stack
  for (int i = 0; i < 20; ++i) allocate(1, StackId{2});           // under the floor
  t.stack_first = firstAllocationOfStacks(t.view().allocations, 3);
  const std::vector<std::uint32_t> rep{static_cast<std::uint32_t>(t.live.size() - 1)};
  const std::int64_t threshold = 10 << 10;  // floor: 2 bytes
  const auto bands = computeBands(t.viewWithStacks(), rep, threshold);
  const auto col = bands.column(0);
  ASSERT_EQ(col.size(), 3u);
  EXPECT_EQ(col[0].allocation, kMergedBand);
  EXPECT_EQ(col[0].hi - col[0].lo, 50 * 1024 + 20);
  EXPECT_EQ(col[1].allocation, 1u);  // stack 0's first allocation
  EXPECT_EQ(col[1].blocks, 100u);
  EXPECT_EQ(col[1].hi - col[1].lo, 100 * 1024);
  EXPECT_EQ(col[2].allocation, 0u);
  EXPECT_EQ(col[2].blocks, 1u);
  // Without stacks, all the small blocks are grey.
  const auto plain = computeBands(t.view(), rep, threshold);
  ASSERT_EQ(plain.column(0).size(), 2u);
  EXPECT_EQ(plain.column(0)[0].hi, live - (1 << 20));
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

// Distance between two colours in RGB (0 .. 441).
double colourDistance(std::uint32_t a, std::uint32_t b) {
  double d = 0;
  for (int shift : {16, 8, 0}) {
    const double x = static_cast<double>((a >> shift) & 0xff) - static_cast<double>((b >> shift) & 0xff);
    d += x * x;
  }
  return std::sqrt(d);
}

// Bands stacked one on another get nearby palette indices: the few nearest are clearly apart,
// and none is the merged band's grey.
TEST(Palette, NearbyIndicesAreClearlyDifferent) {
  double closest = 1e9;
  for (std::uint64_t k = 0; k < 5000; ++k) {
    for (std::uint64_t d = 1; d <= 3; ++d)
      closest = std::min(closest, colourDistance(paletteColour(k), paletteColour(k + d)));
    EXPECT_GT(colourDistance(paletteColour(k), kMergedBandColour), 30) << k;
  }
  EXPECT_GT(closest, 60);
}

TEST(Palette, RanksInOrderOfFirstAppearance) {
  const std::vector<std::uint32_t> items{4, 4, 1, 0xffffffffu, 4, 3, 1};  // 0xffffffff: no key
  const auto rank = colourRanks(items, 6);
  ASSERT_EQ(rank.size(), 6u);
  EXPECT_EQ(rank[4], 0u);
  EXPECT_EQ(rank[1], 1u);
  EXPECT_EQ(rank[3], 2u);
  // Keys never seen come after, still distinct.
  EXPECT_EQ(rank[0], 3u);
  EXPECT_EQ(rank[2], 4u);
  EXPECT_EQ(rank[5], 5u);
}

TEST(Palette, DominantColoursByBytes) {
  BandColumns b;
  b.offsets = {0, 3, 5};
  // Column 0: allocation 0 (10 bytes), merged (50), allocation 1 (20); column 1: 1 (20), 2 (5).
  b.spans = {{0, 50, kMergedBand}, {50, 60, 0}, {60, 80, 1}, {0, 20, 1}, {20, 25, 2}};
  const auto colour = [](std::uint32_t a, const void*) { return 0xff000000u | (a + 1); };
  const auto top = dominantColours(b, colour, nullptr, 2);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0], 0xff000002u);  // allocation 1: 40 bytes
  EXPECT_EQ(top[1], 0xff000001u);  // allocation 0: 10; the merged band is left out
  EXPECT_EQ(dominantColours(b, colour, nullptr, 9).size(), 3u);
}

// Items 0..4 stacked in index order: 0 and 1 live together, 2 allocated on them, 1 freed
// (0 and 2 meet), 3 allocated small, 4 on it; keys are the items' stacks.
TEST(BandColouring, NeighboursFromAllocationsAndFrees) {
  const std::vector<std::uint32_t> begin{0, 1, 2, 4, 5}, end{9, 3, 9, 9, 9};
  const std::vector<std::uint64_t> size{10, 10, 10, 1, 10};
  const std::vector<std::uint32_t> key{0, 1, 2, 3, 4};
  FakeTrace t;
  t.begin = begin;
  t.end = end;
  t.size = size;
  const auto all = neighbourKeys(t.view(), key, 0);
  using P = std::pair<std::uint32_t, std::uint32_t>;
  EXPECT_EQ(all, (std::vector<P>{{0, 1}, {0, 2}, {1, 2}, {2, 3}, {3, 4}}));
  // Without the small item 3, item 4 lies on 2.
  const auto big = neighbourKeys(t.view(), key, 5);
  EXPECT_EQ(big, (std::vector<P>{{0, 1}, {0, 2}, {1, 2}, {2, 4}}));
  // Items of one key make no pair; an item without a key none either.
  const std::vector<std::uint32_t> same{7, 7, 7, kNoAllocation, 7};
  EXPECT_TRUE(neighbourKeys(t.view(), same, 0).empty());
}

// Neighbours as the bands are drawn: a stack band (allocation 4, key 2) lies on the big block
// of key 0 in one column; the grey band and same-key neighbours make no pair.
TEST(BandColouring, NeighboursOfTheDrawnBands) {
  BandColumns b;
  b.offsets = {0, 3, 5};
  b.spans = {{0, 10, kMergedBand}, {10, 20, 4, 3}, {20, 30, 0}, {0, 5, 1}, {5, 9, 3}};
  const std::vector<std::uint32_t> key{0, 1, 9, 1, 2};
  const auto pairs = bandNeighbourKeys(b, key);
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> want{{0, 2}};
  EXPECT_EQ(pairs, want);
}

// Taken column by column, the bands give the same columns and the same pairs as when held whole,
// with and without stacks, at thresholds from every block its own band to a few.
TEST(BandColouring, ColumnByColumnEqualsTheHeldColumns) {
  const auto t = makeTrace(20000, 3);
  const auto rep = everyNth(20000, 3);
  std::vector<std::uint32_t> key(t.size.size());
  for (std::size_t a = 0; a < key.size(); ++a) key[a] = static_cast<std::uint32_t>(a % 97);
  for (const bool stacks : {false, true}) {
    const LifetimeView v = stacks ? t.fastView(true) : t.view();
    for (std::int64_t threshold : {1, 1000, 1 << 15, 1 << 19}) {
      const auto held = computeBands(v, rep, threshold);
      std::size_t c = 0;
      forEachBandColumn(v, rep, threshold, [&](std::span<const BandSpan> col) {
        ASSERT_EQ(col.size(), held.column(c).size()) << "column " << c;
        for (std::size_t k = 0; k < col.size(); ++k) {
          EXPECT_EQ(col[k].allocation, held.column(c)[k].allocation);
          EXPECT_EQ(col[k].lo, held.column(c)[k].lo);
          EXPECT_EQ(col[k].hi, held.column(c)[k].hi);
        }
        ++c;
      });
      EXPECT_EQ(c, rep.size());
      const auto pairs = bandNeighbourKeys(v, rep, threshold, key);
      EXPECT_EQ(pairs, bandNeighbourKeys(held, key)) << "threshold " << threshold;
      if (threshold == 1) {
        EXPECT_GT(pairs.size(), 1000u);  // many distinct pairs, not a trivial case
      }
    }
  }
}

TEST(BandColouring, NeighboursGetDistantColours) {
  // Key 2 would take index 2 by rank; its neighbour 0 then took index 0. Pick a key set where
  // the rank colours clash: every key's rank colour is checked against its neighbours'.
  const std::vector<std::uint32_t> rank{0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  for (std::uint32_t a = 0; a < 8; ++a)
    for (std::uint32_t b = a + 1; b < 8; ++b) pairs.emplace_back(a, b);  // all touch all
  const auto index = colourKeys(rank, pairs, 60);
  ASSERT_EQ(index.size(), 8u);
  EXPECT_EQ(index[0], 0u);  // the first keeps its rank's colour
  for (std::uint32_t a = 0; a < 8; ++a)
    for (std::uint32_t b = a + 1; b < 8; ++b)
      EXPECT_GE(colourDistance(paletteColour(index[a]), paletteColour(index[b])), 60) << a << " " << b;
  // Keys that touch nothing keep their ranks' colours.
  const auto alone = colourKeys(rank, {}, 60);
  for (std::uint32_t k = 0; k < 8; ++k) EXPECT_EQ(alone[k], k);
}

}  // namespace
}  // namespace reservoir::gui
