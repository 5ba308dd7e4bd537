#include "reservoir/replay/stat_words.h"

#include <gtest/gtest.h>

namespace reservoir::replay {
namespace {

TEST(StatWords, PoolStatisticsReadAsWords) {
  EXPECT_EQ(statKeyWords("active.small_pool.peak"), "peak of active small-pool blocks");
  EXPECT_EQ(statKeyWords("reserved_bytes.all.current"), "reserved bytes now (all pools)");
  EXPECT_EQ(statKeyWords("segment.large_pool.allocated"), "large-pool segments ever allocated");
  EXPECT_EQ(statKeyWords("inactive_split_bytes.small_pool.freed"), "inactive split small-pool bytes ever freed");
  EXPECT_EQ(statKeyWords("oversize_allocations.peak"), "peak of oversize allocations");
}

TEST(StatWords, ScalarsReadAsWords) {
  EXPECT_EQ(statKeyWords("num_alloc_retries"), "allocation retries (cache flushed and retried)");
  EXPECT_EQ(statKeyWords("num_device_alloc"), "cudaMalloc calls");
}

TEST(StatWords, AnUnknownKeyStaysAsItIs) {
  EXPECT_EQ(statKeyWords("active.tiny_pool.peak"), "active.tiny_pool.peak");
  EXPECT_EQ(statKeyWords("widgets.all.current"), "widgets.all.current");
  EXPECT_EQ(statKeyWords("active.all.average"), "active.all.average");
  EXPECT_EQ(statKeyWords("something_new"), "something_new");
  EXPECT_EQ(statKeyWords(""), "");
}

TEST(StatWords, ByteStatisticsAreSizes) {
  EXPECT_TRUE(statKeyIsBytes("reserved_bytes.all.peak"));
  EXPECT_TRUE(statKeyIsBytes("inactive_split_bytes.small_pool.current"));
  EXPECT_FALSE(statKeyIsBytes("active.small_pool.peak"));
  EXPECT_FALSE(statKeyIsBytes("num_alloc_retries"));
}

}  // namespace
}  // namespace reservoir::replay
