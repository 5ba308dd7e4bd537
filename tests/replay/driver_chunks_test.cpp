// The driver's VA chunks that what-if mode places segments by once the edited run leaves the
// recording's addresses (whatif/driver_chunks.h).
#include <gtest/gtest.h>

#include "whatif/driver_chunks.h"

namespace reservoir::replay::detail {
namespace {

constexpr sim::ByteCount MiB = 1ull << 20;
constexpr sim::Addr kTop = 0x7f0000000000ull;

struct Driver {
  DriverChunks chunks;
  std::map<sim::Addr, sim::ByteCount> live;
  void take(sim::Addr a, sim::ByteCount size) {
    live[a] = size;
    chunks.taken(a, size);
  }
  void give(sim::Addr a) {
    const auto size = live.at(a);
    live.erase(a);
    chunks.given(a, size);
  }
};

TEST(DriverChunks, ASegmentAtAGranuleLeavesTheRestOfItsChunkAsRoom) {
  Driver d;
  d.take(kTop - 32 * MiB, 20 * MiB);  // a 32 MiB chunk, 12 MiB of room at its end
  EXPECT_EQ(d.chunks.chunkCount(), 1u);
  EXPECT_EQ(d.chunks.roomBytes(), 12 * MiB);
  EXPECT_EQ(d.chunks.fit(10 * MiB, d.live), kTop - 12 * MiB);
  EXPECT_EQ(d.chunks.fit(14 * MiB, d.live), std::nullopt);
  d.take(kTop - 128 * MiB, 74 * MiB);  // 96 MiB chunk: 22 MiB of room
  EXPECT_EQ(d.chunks.roomBytes(), 34 * MiB);
  // Lowest address first: the 74 MiB chunk's end is below the 20 MiB chunk's.
  EXPECT_EQ(d.chunks.fit(10 * MiB, d.live), kTop - 128 * MiB + 74 * MiB);
  EXPECT_EQ(d.chunks.fit(20 * MiB, d.live), kTop - 128 * MiB + 74 * MiB);
  EXPECT_EQ(d.chunks.fit(24 * MiB, d.live), std::nullopt);
}

TEST(DriverChunks, TwoTenMiBSegmentsFillTwoChunksEndsInAscendingOrder) {
  // The Trainer re-run's pattern (docs/whatif.md): 20 MiB segments made top down, each in its
  // own chunk; the 10 MiB segments after them go into those chunks' ends, the lower one first.
  Driver d;
  const sim::Addr upper = kTop - 32 * MiB, lower = kTop - 64 * MiB;
  d.take(upper, 20 * MiB);
  d.take(lower, 20 * MiB);
  const auto first = d.chunks.fit(10 * MiB, d.live);
  ASSERT_TRUE(first);
  EXPECT_EQ(*first, lower + 20 * MiB);
  d.take(*first, 10 * MiB);
  const auto second = d.chunks.fit(10 * MiB, d.live);
  ASSERT_TRUE(second);
  EXPECT_EQ(*second, upper + 20 * MiB);
  EXPECT_LT(*first, *second);
  d.take(*second, 10 * MiB);
  EXPECT_EQ(d.chunks.roomBytes(), 4 * MiB);  // 2 MiB left in each
  EXPECT_EQ(d.chunks.fit(2 * MiB, d.live), lower + 30 * MiB);
}

TEST(DriverChunks, RoomComesBackWhenASegmentInItIsFreedAndGoesWithTheChunksFirstSegment) {
  Driver d;
  const sim::Addr head = kTop - 32 * MiB;
  d.take(head, 20 * MiB);
  d.take(head + 20 * MiB, 4 * MiB);
  d.take(head + 24 * MiB, 4 * MiB);
  EXPECT_EQ(d.chunks.roomBytes(), 4 * MiB);
  d.give(head + 20 * MiB);  // its room joins nothing (the next segment is live)
  EXPECT_EQ(d.chunks.roomBytes(), 8 * MiB);
  EXPECT_EQ(d.chunks.fit(4 * MiB, d.live), head + 20 * MiB);
  EXPECT_EQ(d.chunks.fit(6 * MiB, d.live), std::nullopt);  // two 4 MiB rooms apart
  d.give(head + 24 * MiB);  // joins both: 12 MiB in one piece
  EXPECT_EQ(d.chunks.roomBytes(), 12 * MiB);
  EXPECT_EQ(d.chunks.fit(12 * MiB, d.live), head + 20 * MiB);
  d.give(head);  // the chunk goes with its first segment
  EXPECT_EQ(d.chunks.chunkCount(), 0u);
  EXPECT_EQ(d.chunks.roomBytes(), 0u);
  EXPECT_EQ(d.chunks.fit(2 * MiB, d.live), std::nullopt);
}

TEST(DriverChunks, ASegmentOffTheGranulesStartsNoChunkAndRoomSkipsWhatIsLive) {
  Driver d;
  d.take(kTop - 30 * MiB, 20 * MiB);  // not at a granule boundary
  EXPECT_EQ(d.chunks.chunkCount(), 0u);
  const sim::Addr head = kTop - 128 * MiB;
  d.take(head, 40 * MiB);  // 64 MiB chunk, 24 MiB of room
  d.live[head + 44 * MiB] = 2 * MiB;  // something the chunks were not told of
  EXPECT_EQ(d.chunks.fit(4 * MiB, d.live), head + 40 * MiB);
  EXPECT_EQ(d.chunks.fit(6 * MiB, d.live), head + 46 * MiB);
  EXPECT_EQ(d.chunks.fit(20 * MiB, d.live), std::nullopt);
}

}  // namespace
}  // namespace reservoir::replay::detail
