// PYTORCH_CUDA_ALLOC_CONF parsing and round_size. Expected values are what torch 2.11 did on
// an H200 (docs/allocator-config.md: the probe's inputs and torch's outputs).
#include <gtest/gtest.h>

#include "../simulator/test_device.h"
#include "reservoir/simulator/alloc_config.h"
#include "reservoir/simulator/allocator.h"

namespace reservoir::sim {
namespace {

std::array<ByteCount, 16> table(std::initializer_list<ByteCount> v) {
  std::array<ByteCount, 16> t{};
  std::size_t i = 0;
  for (auto x : v) t[i++] = x;
  return t;
}

TEST(AllocConf, Basics) {
  auto c = parseAllocConf("expandable_segments:True,max_split_size_mb:128,garbage_collection_threshold:0.6");
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_TRUE(c->expandable_segments);
  EXPECT_EQ(c->max_split_size, 128 * kMiB);
  EXPECT_DOUBLE_EQ(c->garbage_collection_threshold, 0.6);
}

TEST(AllocConf, WhitespaceIsDroppedAndSeparatorsAreNotChecked) {
  EXPECT_TRUE(parseAllocConf(" expandable_segments : True ")->expandable_segments);
  auto c = parseAllocConf("max_split_size_mb:128:garbage_collection_threshold:0.5");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->max_split_size, 128 * kMiB);
  EXPECT_DOUBLE_EQ(c->garbage_collection_threshold, 0.5);
}

TEST(AllocConf, TorchErrorTexts) {
  struct Case {
    const char* conf;
    const char* error;
  } cases[] = {
      {"max_split_size_mb:19", "max_split_size_mb too small, must be >= 20"},
      {"max_split_size_mb:abc", "'abc' is not a whole number (torch refuses it too)"},
      {"garbage_collection_threshold:1.0", "set it in (0.0, 1.0)"},
      {"garbage_collection_threshold:0", "set it in (0.0, 1.0)"},
      {"roundup_power2_divisions:3", "divisions has to be power of 2"},
      {"roundup_power2_divisions:0", "divisions has to be power of 2"},
      {"roundup_power2_divisions:[100:4]", "intervals have to be power of 2"},
      {"roundup_power2_divisions:[256:3]", "power of 2 or 0 to disable roundup"},
      {"roundup_power2_divisions:[256:1,512:2", "Index out of bounds"},
      {"max_split_size_mb 128", "Unrecognized key 'max_split_size_mb128'"},
      {"max_split_size_mb=128", "Unrecognized key 'max_split_size_mb=128'"},
      {"foo:1", "Unrecognized key 'foo'"},
      {"max_split_size_mb", "Index out of bounds"},
      {"max_split_size_mb:", "Index out of bounds"},
      {"expandable_segments:true", "Expected 'True' or 'False' at index 2"},
      {"max_non_split_rounding_mb:10", "must be >= 20"},
      {"large_segment_size_mb:8", "large_segment_size_mb must be > 10 MB"},
      {"max_split_size_mb:128,,expandable_segments:True", "Unrecognized key ','"},
  };
  for (const auto& c : cases) {
    auto r = parseAllocConf(c.conf);
    ASSERT_FALSE(r.ok()) << c.conf;
    EXPECT_NE(r.message().find(c.error), std::string::npos) << c.conf << " -> " << r.message();
  }
}

TEST(AllocConf, AcceptedOddities) {
  EXPECT_DOUBLE_EQ(parseAllocConf("garbage_collection_threshold:.7")->garbage_collection_threshold, 0.7);
  EXPECT_DOUBLE_EQ(parseAllocConf("garbage_collection_threshold:0.7x")->garbage_collection_threshold, 0.7);
  EXPECT_EQ(parseAllocConf("roundup_power2_divisions:[]")->roundup_power2_divisions, table({}));
  EXPECT_FALSE(parseAllocConf("expandable_segments:True,expandable_segments:False")->expandable_segments);
  // stoull("-1") wraps: torch stores (SIZE_MAX / MiB) MiB and reports -1048576.
  EXPECT_EQ(static_cast<std::int64_t>(parseAllocConf("max_split_size_mb:-1")->max_split_size), -1048576);
  EXPECT_TRUE(parseAllocConf("release_lock_on_cudamalloc:True").ok());
  EXPECT_TRUE(parseAllocConf("pinned_num_register_threads:4").ok());
  EXPECT_TRUE(parseAllocConf("backend:native").ok());
  EXPECT_DOUBLE_EQ(*parseAllocConf("per_process_memory_fraction:0.5")->per_process_memory_fraction, 0.5);
}

TEST(AllocConf, ExpandableIsNotResetByALaterParse) {
  AllocatorConfig c;
  ASSERT_TRUE(applyAllocConf(c, "expandable_segments:True,max_split_size_mb:200").ok());
  ASSERT_TRUE(applyAllocConf(c, "garbage_collection_threshold:0.5").ok());
  EXPECT_TRUE(c.expandable_segments);
  EXPECT_EQ(c.max_split_size, kUnlimited);  // reset
}

TEST(AllocConf, LargeSegmentSizeRaisesTheSplitMinimum) {
  AllocatorConfig c;
  ASSERT_TRUE(applyAllocConf(c, "large_segment_size_mb:40").ok());
  auto st = applyAllocConf(c, "max_split_size_mb:1e3");  // stoull reads 1
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("must be >= 40"), std::string::npos);
}

TEST(AllocConf, RoundupTables) {
  EXPECT_EQ(parseAllocConf("roundup_power2_divisions:4")->roundup_power2_divisions,
            table({4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}));
  EXPECT_EQ(parseAllocConf("roundup_power2_divisions:[256:1,512:2,>:8]")->roundup_power2_divisions,
            table({1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 8, 8, 8, 8, 8, 8}));
  EXPECT_EQ(parseAllocConf("roundup_power2_divisions:[64:8,256:4,1024:4,>:1]")->roundup_power2_divisions,
            table({8, 8, 8, 8, 8, 8, 8, 0, 4, 0, 4, 1, 1, 1, 1, 1}));
  EXPECT_EQ(parseAllocConf("roundup_power2_divisions:[1:4]")->roundup_power2_divisions, table({4}));
  EXPECT_EQ(parseAllocConf("roundup_power2_divisions:[>:4]")->roundup_power2_divisions,
            table({0, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}));
  EXPECT_EQ(parseAllocConf("roundup_power2_divisions:[128:4,>:8]")->roundup_power2_divisions,
            table({4, 4, 4, 4, 4, 4, 4, 4, 8, 8, 8, 8, 8, 8, 8, 8}));
}

struct RoundCase {
  const char* conf;
  ByteCount request;
  ByteCount block;  // the block torch 2.11 gave the request in a fresh segment
};

// The probe measured block sizes (round_size plus any unsplit slack of the new segment),
// so the check goes through the allocator model.
TEST(RoundSize, BlockSizesMeasuredOnTorch) {
  const RoundCase cases[] = {
      {"roundup_power2_divisions:4", 1200, 1536},
      {"roundup_power2_divisions:4", 513, 1024},
      {"roundup_power2_divisions:4", 1048577, 1310720},
      {"roundup_power2_divisions:4", 1500000, 1572864},
      {"roundup_power2_divisions:4", 2500000, 2621440},
      {"roundup_power2_divisions:4", 5000000, 5242880},
      {"roundup_power2_divisions:4", 12345678, 12582912},
      {"roundup_power2_divisions:4", 100000000, 100663296},
      {"roundup_power2_divisions:4", 600000000, 671088640},
      {"roundup_power2_divisions:4", 1073741824, 1073741824},
      {"roundup_power2_divisions:4", 1073741825, 1342177280},
      {"roundup_power2_divisions:4", 3000000000, 3221225472},
      {"roundup_power2_divisions:[256:1,512:2,>:8]", 1048577, 1049088},
      {"roundup_power2_divisions:[256:1,512:2,>:8]", 1500000, 1500160},
      {"roundup_power2_divisions:[256:1,512:2,>:8]", 2500000, 2500096},
      {"roundup_power2_divisions:[256:1,512:2,>:8]", 5000000, 5000192},
      {"roundup_power2_divisions:[256:1,512:2,>:8]", 12345678, 12582912},
      {"roundup_power2_divisions:[256:1,512:2,>:8]", 600000000, 805306368},
      {"roundup_power2_divisions:[256:1,512:2,>:8]", 1073741825, 1207959552},
      {"roundup_power2_divisions:[1:4,>:8]", 600000000, 603979776},
      {"roundup_power2_divisions:[1:4,>:8]", 1048577, 1310720},
      {"", 1, 512},
      {"", 513, 1024},
      {"", 20447232, 20971520},  // the 19.5 MiB worked example: slack not split off
  };
  for (const auto& c : cases) {
    auto cfg = parseAllocConf(c.conf);
    ASSERT_TRUE(cfg.ok());
    test::TestDevice device;
    CachingAllocator alloc(*cfg, &device);
    auto r = alloc.malloc(c.request, 0, 1);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.block_size, c.block) << c.conf << " " << c.request;
  }
}

TEST(RoundSize, RoundingRules) {
  AllocatorConfig plain;
  EXPECT_EQ(plain.roundSize(1), 512u);
  EXPECT_EQ(plain.roundSize(12345678), 12345856u);
  auto d4 = *parseAllocConf("roundup_power2_divisions:4");
  EXPECT_EQ(d4.roundSize(1200), 1536u);         // 1200 <= 512*4: plain rounding
  EXPECT_EQ(d4.roundSize(1048577), 1310720u);   // 1 MiB + 1 -> next quarter of [1, 2) MiB
  EXPECT_EQ(d4.roundSize(1u << 30), 1u << 30);  // powers of two stay
  auto d8 = *parseAllocConf("roundup_power2_divisions:[256:1,512:2,>:8]");
  EXPECT_EQ(d8.roundSize(12345678), 12345856u);    // slot 3 has 1 division: plain
  EXPECT_EQ(d8.roundSize(600000000), 805306368u);  // slot 9 has 2 divisions
}

TEST(AllocationSize, SegmentSizes) {
  AllocatorConfig c;
  EXPECT_EQ(c.allocationSize(512), 2 * kMiB);
  EXPECT_EQ(c.allocationSize(kMiB), 2 * kMiB);
  EXPECT_EQ(c.allocationSize(kMiB + 512), 20 * kMiB);
  EXPECT_EQ(c.allocationSize(10 * kMiB - 512), 20 * kMiB);
  EXPECT_EQ(c.allocationSize(10 * kMiB), 10 * kMiB);
  EXPECT_EQ(c.allocationSize(10 * kMiB + 512), 12 * kMiB);
}

}  // namespace
}  // namespace reservoir::sim
