// mallocAt: the allocations of a CUDA-graph tree restoring a pool to its checkpoint
// (setSegmentStateToCheckpoint): the cached block at the checkpoint's address, split at exactly
// the block's size, whatever the best fit, the rounding or the split rules would choose.
#include <gtest/gtest.h>

#include "reservoir/simulator/allocator.h"
#include "test_device.h"

namespace reservoir::sim {
namespace {

constexpr ByteCount MiB = kMiB;

struct Restore {
  Restore() : config(*parseAllocConf("")), alloc(config, &device, &sink) { alloc.setCheckLevel(CheckLevel::kExpensive); }
  BlockHandle take(ByteCount size) {
    const auto r = alloc.malloc(size, 0, ++tag);
    EXPECT_TRUE(r.ok());
    return r.block;
  }
  std::int64_t allocated() const { return alloc.stats().allocated_bytes[kAggregate].current; }
  AllocatorConfig config;
  test::TestDevice device;
  test::RecordingSink sink;
  CachingAllocator alloc;
  std::uint64_t tag = 0;
};

TEST(CheckpointRestore, TakesTheBlockAtTheAddressNotTheBestFit) {
  Restore r;
  const auto big = r.take(60 * MiB);    // a 60 MiB segment
  const auto exact = r.take(16 * MiB);  // a 16 MiB segment: the best fit for 16 MiB once free
  const Addr big_at = r.alloc.addressOf(big);
  r.alloc.free(big);
  r.alloc.free(exact);
  const auto placed = r.alloc.mallocAt(big_at, 16 * MiB, ++r.tag);
  ASSERT_TRUE(placed.ok());
  EXPECT_EQ(placed.addr, big_at);
  EXPECT_EQ(placed.block_size, 16 * MiB);
  const auto next = r.alloc.mallocAt(big_at + 16 * MiB, 12 * MiB, ++r.tag);  // the remainder, split again
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next.block_size, 12 * MiB);
  EXPECT_EQ(r.allocated(), static_cast<std::int64_t>(28 * MiB));
  EXPECT_EQ(r.sink.events.back().action, Action::kAlloc);
  EXPECT_EQ(r.sink.events.back().size, 12 * MiB);
  EXPECT_EQ(r.alloc.invariantFailure(), "");
}

TEST(CheckpointRestore, SplitsBelowTheUsualThresholdAndKeepsTheSizeUnrounded) {
  Restore r;
  const auto seg = r.take(20 * MiB);
  const Addr at = r.alloc.addressOf(seg);
  r.alloc.free(seg);
  // A normal malloc of 20 MiB - 512 KiB would take the whole block (remainder <= 1 MiB is not split).
  const auto placed = r.alloc.mallocAt(at, 20 * MiB - 512 * 1024, ++r.tag);
  ASSERT_TRUE(placed.ok());
  EXPECT_EQ(placed.block_size, 20 * MiB - 512 * 1024);
  const auto rest = r.alloc.mallocAt(at + 20 * MiB - 512 * 1024, 512 * 1024, ++r.tag);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(r.alloc.invariantFailure(), "");
}

TEST(CheckpointRestore, RefusesWithoutChangeWhereNoCachedBlockStarts) {
  Restore r;
  const auto seg = r.take(20 * MiB);
  const Addr at = r.alloc.addressOf(seg);
  EXPECT_FALSE(r.alloc.mallocAt(at, 2 * MiB).ok());  // allocated, not cached
  r.alloc.free(seg);
  const auto events = r.sink.events.size();
  EXPECT_FALSE(r.alloc.mallocAt(at + 2 * MiB, 2 * MiB).ok());  // inside a block, not at its start
  EXPECT_FALSE(r.alloc.mallocAt(at, 40 * MiB).ok());           // too small
  EXPECT_EQ(r.sink.events.size(), events);
  EXPECT_EQ(r.allocated(), 0);
  EXPECT_TRUE(r.alloc.mallocAt(at, 20 * MiB).ok());
}

}  // namespace
}  // namespace reservoir::sim
