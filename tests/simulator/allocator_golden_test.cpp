// Golden tests of the allocator model, written from first principles (the rules in
// ../shared/docs/allocator-spec.md), not from the model's own output.
#include <gtest/gtest.h>

#include <vector>

#include "reservoir/simulator/allocator.h"
#include "test_device.h"

namespace reservoir::sim {
namespace {

using test::RecordingSink;
using test::TestDevice;

constexpr ByteCount MiB = kMiB;

struct Fixture {
  explicit Fixture(std::string_view conf = "") : config(*parseAllocConf(conf)), alloc(config, &device, &sink) {
    alloc.setCheckLevel(CheckLevel::kExpensive);
  }
  ByteCount reserved() const { return static_cast<ByteCount>(alloc.stats().reserved_bytes[kAggregate].current); }
  ByteCount allocated() const { return static_cast<ByteCount>(alloc.stats().allocated_bytes[kAggregate].current); }
  std::vector<BlockHandle> mallocN(int n, ByteCount size, StreamId stream = 0) {
    std::vector<BlockHandle> out;
    for (int i = 0; i < n; ++i) {
      auto r = alloc.malloc(size, stream, static_cast<std::uint64_t>(++tag));
      EXPECT_TRUE(r.ok());
      out.push_back(r.block);
    }
    return out;
  }
  void freeAll(const std::vector<BlockHandle>& blocks) {
    for (auto b : blocks) alloc.free(b);
  }
  AllocatorConfig config;
  TestDevice device;
  RecordingSink sink;
  CachingAllocator alloc;
  int tag = 0;
};

TEST(AllocatorGolden, SixteensThenThirtyTwosReserveTwoHundredFiftySixMiB) {
  Fixture f;
  f.freeAll(f.mallocN(8, 16 * MiB));
  EXPECT_EQ(f.reserved(), 128 * MiB);
  f.mallocN(4, 32 * MiB);  // no cached block is big enough: four new 32 MiB segments
  EXPECT_EQ(f.reserved(), 256 * MiB);
  EXPECT_EQ(f.alloc.invariantFailure(), "");
}

TEST(AllocatorGolden, ThirtyTwosThenSixteensReserveOneHundredTwentyEightMiB) {
  Fixture f;
  f.freeAll(f.mallocN(4, 32 * MiB));
  f.mallocN(8, 16 * MiB);  // each cached 32 MiB segment splits into two 16 MiB blocks
  EXPECT_EQ(f.reserved(), 128 * MiB);
  EXPECT_EQ(f.sink.count(Action::kSegmentAlloc), 4u);
  EXPECT_EQ(f.alloc.invariantFailure(), "");
}

TEST(AllocatorGolden, ExpandableMapsSevenTwentyMiBPagesForEightSixteens) {
  Fixture f("expandable_segments:True");
  f.mallocN(8, 16 * MiB);
  EXPECT_EQ(f.reserved(), 140 * MiB);
  EXPECT_EQ(f.allocated(), 128 * MiB);
  ByteCount mapped = 0;
  for (const auto& e : f.sink.events)
    if (e.action == Action::kSegmentMap) mapped += e.size;
  EXPECT_EQ(mapped, 140 * MiB);
  EXPECT_EQ(f.sink.count(Action::kSegmentAlloc), 0u);
  EXPECT_EQ(f.alloc.invariantFailure(), "");
}

TEST(AllocatorGolden, NineteenAndAHalfMiBTakesATwentyMiBSegmentUnsplit) {
  Fixture f;
  auto r = f.alloc.malloc(20447232, 0, 1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.block_size, 20 * MiB);  // 512 KiB of slack is not split off
  EXPECT_EQ(f.allocated(), 20 * MiB);
  EXPECT_EQ(f.reserved(), 20 * MiB);
  const auto segs = f.alloc.segments();
  ASSERT_EQ(segs.size(), 1u);
  EXPECT_EQ(segs[0].blocks.size(), 1u);
}

TEST(AllocatorGolden, EmptyCacheFreesOnlyWholeFreeSegments) {
  Fixture f;
  auto small = f.alloc.malloc(1000, 0, 1);      // 2 MiB small segment, split
  auto a = f.alloc.malloc(3 * MiB, 0, 2);       // 20 MiB large segment, split
  auto whole = f.alloc.malloc(24 * MiB, 0, 3);  // too big for the 17 MiB left: its own segment
  f.alloc.free(whole.block);
  f.alloc.free(a.block);  // the 20 MiB segment is whole and free again
  EXPECT_EQ(f.reserved(), 2 * MiB + 20 * MiB + 24 * MiB);
  f.alloc.emptyCache();
  EXPECT_EQ(f.reserved(), 2 * MiB);  // the small segment still holds `small`
  EXPECT_EQ(f.sink.count(Action::kSegmentFree), 2u);
  f.alloc.free(small.block);
  f.alloc.emptyCache();
  EXPECT_EQ(f.reserved(), 0u);
  EXPECT_EQ(f.alloc.invariantFailure(), "");
}

TEST(AllocatorGolden, SplitSegmentSurvivesEmptyCache) {
  Fixture f;
  auto a = f.alloc.malloc(3 * MiB, 0, 1);
  auto b = f.alloc.malloc(5 * MiB, 0, 2);  // same 20 MiB segment
  f.alloc.free(a.block);
  f.alloc.emptyCache();
  EXPECT_EQ(f.reserved(), 20 * MiB);  // b pins the segment
  f.alloc.free(b.block);
  f.alloc.emptyCache();
  EXPECT_EQ(f.reserved(), 0u);
}

// The worked example of the spec (§15) and of the LibTorch capture in ../shared/traces/cpp:
// figures measured with getDeviceStats(0) on an H200.
TEST(AllocatorGolden, WorkedExampleMatchesTheLibTorchMeasurements) {
  Fixture f;
  auto a = f.alloc.malloc(1000, 0, 1);
  auto b = f.alloc.malloc(3 * MiB, 0, 2);
  EXPECT_EQ(f.reserved(), 22 * MiB);
  EXPECT_EQ(f.allocated(), 3146752u);
  f.alloc.free(b.block);
  auto c = f.alloc.malloc(15 * MiB, 0, 3);
  auto d = f.alloc.malloc(20447232, 0, 4);
  EXPECT_EQ(f.reserved(), 42 * MiB);
  EXPECT_EQ(f.allocated(), 36701184u);
  f.alloc.emptyCache();
  EXPECT_EQ(f.reserved(), 42 * MiB);
  f.alloc.free(d.block);
  f.alloc.emptyCache();
  EXPECT_EQ(f.reserved(), 22 * MiB);
  EXPECT_EQ(f.allocated(), 15729664u);
  (void)a;
  (void)c;
}

TEST(AllocatorGolden, BestFitPrefersTheSmallestThenTheLowestAddress) {
  Fixture f;
  auto x = f.mallocN(3, 12 * MiB);  // three 12 MiB segments at increasing addresses
  auto big = f.alloc.malloc(14 * MiB, 0, 99);
  f.alloc.free(x[2]);
  f.alloc.free(x[0]);
  f.alloc.free(big.block);
  auto r = f.alloc.malloc(11 * MiB, 0, 100);  // fits 12 MiB (two candidates) and 14 MiB
  EXPECT_EQ(r.addr, f.alloc.addressOf(x[0]) == r.addr ? r.addr : r.addr);
  const Addr lowest12 = 0x7f0000000000ull;
  EXPECT_EQ(r.addr, lowest12);
}

TEST(AllocatorGolden, StreamsDoNotShareCachedBlocks) {
  Fixture f;
  auto a = f.alloc.malloc(12 * MiB, 0, 1);
  f.alloc.free(a.block);
  auto b = f.alloc.malloc(12 * MiB, 7, 2);  // another stream: a new segment
  EXPECT_NE(b.addr, a.addr);
  EXPECT_EQ(f.reserved(), 24 * MiB);
}

TEST(AllocatorGolden, RecordStreamDefersTheFreeUntilTheEventCompletes) {
  Fixture f;
  auto a = f.alloc.malloc(12 * MiB, 7, 1);
  f.alloc.recordStream(a.block, 0);
  f.alloc.free(a.block);
  EXPECT_EQ(f.sink.count(Action::kFreeRequested), 1u);
  EXPECT_EQ(f.sink.count(Action::kFreeCompleted), 0u);
  EXPECT_EQ(f.alloc.stats().active_bytes[kAggregate].current, static_cast<std::int64_t>(12 * MiB));
  auto b = f.alloc.malloc(12 * MiB, 7, 2);  // still pending: cannot reuse
  EXPECT_NE(b.addr, a.addr);
  f.device.completed_tags.insert(1);
  auto c = f.alloc.malloc(12 * MiB, 7, 3);  // process_events frees it first, then reuses it
  EXPECT_EQ(c.addr, a.addr);
  EXPECT_EQ(f.sink.count(Action::kFreeCompleted), 1u);
  EXPECT_EQ(f.alloc.invariantFailure(), "");
}

TEST(AllocatorGolden, EmptyCacheSynchronizesPendingFrees) {
  Fixture f;
  auto a = f.alloc.malloc(12 * MiB, 7, 1);
  f.alloc.recordStream(a.block, 0);
  f.alloc.free(a.block);
  f.alloc.emptyCache();
  EXPECT_EQ(f.reserved(), 0u);
  EXPECT_EQ(f.alloc.stats().num_sync_all_streams, 1);
}

TEST(AllocatorGolden, OomReleasesTheCacheAndRetriesBeforeFailing) {
  Fixture f;
  f.device.capacity = 40 * MiB;
  auto a = f.alloc.malloc(24 * MiB, 0, 1);
  f.alloc.free(a.block);                    // cached, not returned
  auto b = f.alloc.malloc(30 * MiB, 0, 2);  // 24 + 30 > 40: release the cache, retry
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(f.alloc.stats().num_alloc_retries, 1);
  EXPECT_EQ(f.reserved(), 30 * MiB);
  auto c = f.alloc.malloc(12 * MiB, 0, 3);  // 30 + 12 > 40 even after releasing
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(f.alloc.stats().num_ooms, 1);
  EXPECT_EQ(f.sink.events.back().action, Action::kOom);
  EXPECT_EQ(f.sink.events.back().size, 12 * MiB);
}

TEST(AllocatorGolden, MemoryFractionFailsWithoutAskingTheDriver) {
  Fixture f;
  f.device.total = 100 * MiB;
  f.alloc.setMemoryFraction(0.5);  // 50 MiB allowed
  auto a = f.alloc.malloc(40 * MiB, 0, 1);
  ASSERT_TRUE(a.ok());
  auto b = f.alloc.malloc(12 * MiB, 0, 2);
  EXPECT_FALSE(b.ok());
  EXPECT_EQ(f.device.in_use, 40 * MiB);
}

TEST(AllocatorGolden, MaxSplitSizeKeepsOversizeBlocksWhole) {
  Fixture f("max_split_size_mb:100");
  auto big = f.alloc.malloc(200 * MiB, 0, 1);
  f.alloc.free(big.block);
  auto small = f.alloc.malloc(50 * MiB, 0, 2);  // may not take the 200 MiB oversize block
  EXPECT_NE(small.addr, big.addr);
  auto close = f.alloc.malloc(190 * MiB, 0, 3);  // within 20 MiB of it: takes it unsplit
  EXPECT_EQ(close.addr, big.addr);
  EXPECT_EQ(f.alloc.sizeOf(close.block), 200 * MiB);
  EXPECT_EQ(f.alloc.stats().oversize_allocations.current, 1);
}

TEST(AllocatorGolden, ExpandableEmptyCacheUnmapsWholeFreePages) {
  Fixture f("expandable_segments:True");
  auto a = f.alloc.malloc(30 * MiB, 0, 1);  // maps two 20 MiB pages
  auto b = f.alloc.malloc(30 * MiB, 0, 2);  // grows the segment to 60 MiB (3 pages)
  EXPECT_EQ(f.reserved(), 60 * MiB);
  f.alloc.free(b.block);  // [30, 60) free: page 2 ([40,60)) is whole
  f.alloc.emptyCache();
  EXPECT_EQ(f.reserved(), 40 * MiB);
  EXPECT_EQ(f.sink.count(Action::kSegmentUnmap), 1u);
  f.alloc.free(a.block);
  f.alloc.emptyCache();
  EXPECT_EQ(f.reserved(), 0u);
  EXPECT_EQ(f.alloc.invariantFailure(), "");
}

TEST(AllocatorGolden, ExpandableSpecExampleThreeThenThirtyMiB) {
  Fixture f("expandable_segments:True");
  auto a = f.alloc.malloc(3 * MiB, 0, 1);
  auto b = f.alloc.malloc(30 * MiB, 0, 2);
  EXPECT_EQ(f.reserved(), 40 * MiB);
  EXPECT_EQ(f.allocated(), 33 * MiB);
  EXPECT_EQ(b.addr, a.addr + 3 * MiB);
}

TEST(AllocatorGolden, SmallRequestsShareTwoMiBSegments) {
  Fixture f;
  f.mallocN(4, 512 * 1024);
  EXPECT_EQ(f.reserved(), 2 * MiB);
  f.mallocN(1, 1);
  EXPECT_EQ(f.reserved(), 4 * MiB);  // the first segment is full
}

}  // namespace
}  // namespace reservoir::sim
