// Allocator settings added after torch 2.11 (large_segment_size_mb's parse order,
// throw_on_cudamalloc_oom, expandable_segments_reserve[_by_class], the host-allocator keys)
// and the lenient parse of recorded settings. Expected values follow the semantics of
// torch's sources (docs/allocator-config.md names the commit and PRs), worked out by hand.
#include <gtest/gtest.h>

#include <set>

#include "reservoir/simulator/alloc_config.h"
#include "reservoir/simulator/allocator.h"
#include "test_device.h"

namespace reservoir::sim {
namespace {

constexpr ByteCount MiB = kMiB;
constexpr ByteCount GiB = 1024 * kMiB;

std::string errorOf(std::string_view conf) {
  auto r = parseAllocConf(conf);
  return r.ok() ? std::string("(accepted)") : r.message();
}

TEST(Settings2026, LargeSegmentSizeIsReadFirst) {
  // torch parses large_segment_size_mb before every other key, so the split minimum is
  // already 40 when max_split_size_mb:30 is read, whatever the order in the string.
  EXPECT_NE(errorOf("max_split_size_mb:30,large_segment_size_mb:40").find("max_split_size_mb too small, must be >= 40"),
            std::string::npos);
  EXPECT_NE(errorOf("max_non_split_rounding_mb:30,large_segment_size_mb:40").find("must be >= 40"), std::string::npos);
  auto c = parseAllocConf("max_split_size_mb:40,large_segment_size_mb:40");
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->large_segment_size, 40 * MiB);
  // ...and the rounding slack follows it: 40 MiB, not the default 20.
  EXPECT_EQ(parseAllocConf("large_segment_size_mb:40")->max_non_split_rounding_size, 40 * MiB);
  // Its own error comes before any other key's.
  EXPECT_NE(errorOf("max_split_size_mb:abc,large_segment_size_mb:10").find("large_segment_size_mb must be > 10 MB"),
            std::string::npos);
}

TEST(Settings2026, LargeSegmentSizeSurvivesALaterParseAndResetsTheRounding) {
  AllocatorConfig c;
  ASSERT_TRUE(applyAllocConf(c, "large_segment_size_mb:40,max_non_split_rounding_mb:100").ok());
  EXPECT_EQ(c.max_non_split_rounding_size, 100 * MiB);
  ASSERT_TRUE(applyAllocConf(c, "expandable_segments:False").ok());
  EXPECT_EQ(c.large_segment_size, 40 * MiB);
  EXPECT_EQ(c.max_non_split_rounding_size, 40 * MiB);  // reset to the large segment size
}

TEST(Settings2026, LargeSegmentSizeGivesFortyMiBOfRoundingSlack) {
  // max_split 100 MiB: a 200 MiB oversize block may serve a request r unsplit when
  // 200 < r + max_non_split_rounding. For r = 165: 205 with 40 MiB slack, 185 with 20.
  for (const auto& [conf, same] :
       {std::pair{"large_segment_size_mb:40,max_split_size_mb:100", true}, std::pair{"max_split_size_mb:100", false}}) {
    test::TestDevice device;
    CachingAllocator alloc(*parseAllocConf(conf), &device);
    auto big = alloc.malloc(200 * MiB, 0, 1);
    alloc.free(big.block);
    auto r = alloc.malloc(165 * MiB, 0, 2);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.addr == big.addr, same) << conf;
    if (same) {
      EXPECT_EQ(r.block_size, 200 * MiB);
    }
  }
}

TEST(Settings2026, UnknownKeysAreAnErrorWhenTypedAndSkippedWhenRecorded) {
  EXPECT_NE(errorOf("foo:1,max_split_size_mb:128").find("Unrecognized key 'foo'"), std::string::npos);
  AllocatorConfig c;
  ASSERT_TRUE(
      applyAllocConf(c, "foo:1,max_split_size_mb:128,bar:[a:1,b:2],foo:2,expandable_segments:True", UnknownKeys::kSkip)
          .ok());
  EXPECT_EQ(c.max_split_size, 128 * MiB);
  EXPECT_TRUE(c.expandable_segments);
  EXPECT_EQ(c.ignored_keys, (std::vector<std::string>{"foo", "bar"}));  // each named once
  // The recorded settings never block on an unknown key.
  traces::RecordedSettings recorded;
  recorded.alloc_conf = "future_knob:7,garbage_collection_threshold:0.5";
  auto r = configFromRecorded(recorded);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_DOUBLE_EQ(r->garbage_collection_threshold, 0.5);
  EXPECT_EQ(r->ignored_keys, std::vector<std::string>{"future_knob"});
  // A known key with a bad value is still an error (torch would not have recorded it).
  recorded.alloc_conf = "future_knob:7,garbage_collection_threshold:2";
  EXPECT_FALSE(configFromRecorded(recorded).ok());
}

TEST(Settings2026, HostAllocatorKeysAreCheckedAndHaveNoDeviceEffect) {
  EXPECT_TRUE(parseAllocConf("pinned_num_register_threads:128").ok());
  EXPECT_NE(errorOf("pinned_num_register_threads:256").find("less than or equal to 128, got 256"), std::string::npos);
  EXPECT_NE(errorOf("pinned_num_register_threads:6").find("power of 2, got 6"), std::string::npos);
  EXPECT_TRUE(parseAllocConf("pinned_free_catch_all:True").ok());
  EXPECT_NE(errorOf("pinned_free_catch_all:1").find("Expected 'True' or 'False'"), std::string::npos);
  EXPECT_NE(errorOf("pinned_reserve_segment_size_mb:0").find("greater than 0"), std::string::npos);
  EXPECT_TRUE(parseAllocConf("pinned_use_background_threads:True,pinned_use_cuda_host_register:False").ok());
  auto c = parseAllocConf("pinned_free_catch_all:True,pinned_num_register_threads:8");
  AllocatorConfig plain;
  EXPECT_EQ(c->toConfString(), plain.toConfString());
}

TEST(Settings2026, ThrowOnCudaMallocOomSkipsTheRetryChain) {
  // Device of 100 MiB, fraction 0.5 (50 MiB). A free 24 MiB segment is cached; 24 + 30 > 50.
  for (bool throw_on : {false, true}) {
    auto cfg = parseAllocConf(throw_on ? "throw_on_cudamalloc_oom:True" : "");
    ASSERT_TRUE(cfg.ok());
    EXPECT_EQ(cfg->throw_on_cudamalloc_oom, throw_on);
    test::TestDevice device;
    device.total = 100 * MiB;
    test::RecordingSink sink;
    CachingAllocator alloc(*cfg, &device, &sink);
    alloc.setMemoryFraction(0.5);
    auto a = alloc.malloc(24 * MiB, 0, 1);
    alloc.free(a.block);
    auto b = alloc.malloc(30 * MiB, 0, 2);
    if (throw_on) {
      // Rejected before the driver, without releasing the cache and retrying.
      EXPECT_FALSE(b.ok());
      EXPECT_EQ(alloc.stats().num_alloc_retries, 0);
      EXPECT_EQ(alloc.stats().num_ooms, 1);
      EXPECT_EQ(sink.count(Action::kSegmentFree), 0u);
      EXPECT_EQ(sink.events.back().action, Action::kOom);
    } else {
      EXPECT_TRUE(b.ok());  // release the 24 MiB segment and retry: 30 <= 50
      EXPECT_EQ(alloc.stats().num_alloc_retries, 1);
      EXPECT_EQ(sink.count(Action::kSegmentFree), 1u);
    }
  }
}

TEST(Settings2026, ThrowOnCudaMallocOomNeedsAFraction) {
  test::TestDevice device;
  device.total = 100 * MiB;
  device.capacity = 40 * MiB;  // the driver, not the fraction, runs out
  CachingAllocator alloc(*parseAllocConf("throw_on_cudamalloc_oom:True"), &device);
  auto a = alloc.malloc(24 * MiB, 0, 1);
  alloc.free(a.block);
  EXPECT_TRUE(alloc.malloc(30 * MiB, 0, 2).ok());  // released and retried as usual
  EXPECT_EQ(alloc.stats().num_alloc_retries, 1);
}

TEST(Settings2026, ReserveValues) {
  auto c = parseAllocConf("expandable_segments_reserve:0.5");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->expandable_segments_reserve, (ReserveSpec{true, 0.5}));
  EXPECT_EQ(c->expandableReserve(80 * GiB), 40 * GiB);
  c = parseAllocConf("expandable_segments_reserve:40G");
  EXPECT_EQ(c->expandableReserve(80 * GiB), 40 * GiB);
  EXPECT_EQ(parseAllocConf("expandable_segments_reserve:4g")->expandableReserve(80 * GiB), 4 * GiB);
  // Capped at the historical 9/8 of the device; unset means 9/8.
  EXPECT_EQ(parseAllocConf("expandable_segments_reserve:2")->expandableReserve(80 * GiB), 90 * GiB);
  EXPECT_EQ(parseAllocConf("expandable_segments_reserve:1e20G")->expandableReserve(80 * GiB), 90 * GiB);
  EXPECT_EQ(AllocatorConfig{}.expandableReserve(80 * GiB), 90 * GiB);
  // Bad values are a warning, never an error, and keep the default.
  for (const char* bad : {"abc", "-1", "0", "0.5x", "G", "inf", "nan"}) {
    auto r = parseAllocConf(std::string("expandable_segments_reserve:") + bad);
    ASSERT_TRUE(r.ok()) << bad;
    EXPECT_FALSE(r->expandable_segments_reserve.has_value()) << bad;
    ASSERT_EQ(r->parse_warnings.size(), 1u) << bad;
    EXPECT_NE(r->parse_warnings[0].find("using default"), std::string::npos);
  }
  auto by = parseAllocConf("expandable_segments_reserve_by_class:[serving:0.25,bad:12X,load:40G],max_split_size_mb:64");
  ASSERT_TRUE(by.ok()) << by.message();
  EXPECT_EQ(by->max_split_size, 64 * MiB);
  ASSERT_EQ(by->expandable_segments_reserve_by_class.size(), 2u);
  EXPECT_EQ(by->expandable_segments_reserve_by_class[0].first, "serving");
  EXPECT_EQ(by->expandable_segments_reserve_by_class[1].second, (ReserveSpec{false, 40}));
  EXPECT_EQ(by->parse_warnings.size(), 1u);
  // The canonical text parses back to the same settings.
  auto round = parseAllocConf(by->toConfString());
  ASSERT_TRUE(round.ok()) << by->toConfString();
  EXPECT_EQ(round->expandable_segments_reserve_by_class, by->expandable_segments_reserve_by_class);
}

std::set<Addr> segmentBases(const CachingAllocator& alloc) {
  std::set<Addr> bases;
  for (const auto& s : alloc.segments()) bases.insert(s.address);
  return bases;
}

TEST(Settings2026, ASmallerReserveCapsGrowthAndStartsNewSegments) {
  // Device of 100 MiB, 20 MiB pages. Default reserve 112.5 MiB -> 6 pages; 0.5 -> 50 MiB
  // -> ceil(50 / 20) = 3 pages (60 MiB).
  for (const auto& [conf, segments] : {std::pair{"expandable_segments:True", 1u},
                                       std::pair{"expandable_segments:True,expandable_segments_reserve:0.5", 2u}}) {
    test::TestDevice device;
    device.total = 100 * MiB;
    CachingAllocator alloc(*parseAllocConf(conf), &device);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(alloc.malloc(30 * MiB, 0, static_cast<std::uint64_t>(i + 1)).ok());
    // 90 MiB in use: one segment grown to 100 MiB, or 60 MiB full plus a second segment.
    EXPECT_EQ(segmentBases(alloc).size(), segments) << conf;
    EXPECT_EQ(alloc.invariantFailure(), "");
  }
}

TEST(Settings2026, ARequestLargerThanAWholeReserveFails) {
  test::TestDevice device;
  device.total = 100 * MiB;
  test::RecordingSink sink;
  CachingAllocator alloc(*parseAllocConf("expandable_segments:True,expandable_segments_reserve:0.2"), &device, &sink);
  // 20 MiB reserve = one page: a 30 MiB request can never fit one segment.
  auto r = alloc.malloc(30 * MiB, 0, 1);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(sink.count(Action::kSegmentMap), 0u);
  EXPECT_EQ(sink.events.back().action, Action::kOom);
  EXPECT_TRUE(alloc.malloc(20 * MiB, 0, 2).ok());  // a page-sized one still does
}

TEST(Settings2026, GraphCaptureRecordStreamReuseFreesJoinedBlocksDuringTheCapture) {
  // Measured on the H200 (scripts/device/probe_2026.py, torch 2.11): inside a capture, a block
  // used on a side stream (record_stream) that the capture stream then joins is reused by the
  // next same-size request with graph_capture_record_stream_reuse:True, and not without it.
  for (bool reuse : {false, true}) {
    test::TestDevice device;
    CachingAllocator alloc(*parseAllocConf(reuse ? "graph_capture_record_stream_reuse:True" : ""), &device);
    const PoolId graph{1, 0};
    alloc.createPool(graph);
    alloc.beginAllocateToPool(PoolRouting{graph, StreamId{0}});
    auto a = alloc.malloc(8 * MiB, 0, 1);
    alloc.recordStream(a.block, 7);
    alloc.free(a.block);
    device.completed_tags.insert(1);  // the side stream's work is joined: its event is done
    auto b = alloc.malloc(8 * MiB, 0, 2);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b.addr == a.addr, reuse) << reuse;
    alloc.endAllocateToPool(graph);
    EXPECT_EQ(alloc.invariantFailure(), "");
  }
}

// The start of a ring-buffer window at base B: a 60 MiB expandable segment of 20 MiB pages
// with [B, B+20) and [B+40, B+60) mapped; the blocks are the test's.
SeedSegment ringWindowSegment(Addr B) {
  SeedSegment seg;
  seg.addr = B;
  seg.size = 60 * MiB;
  seg.is_expandable = true;
  seg.mapped = {{B, 20 * MiB}, {B + 40 * MiB, 20 * MiB}};
  return seg;
}

TEST(SeedExpandable, AMidRunReservationGrowsIntoItsUnmappedPages) {
  // A ring-buffer window that starts with an expandable segment mapped: base B, 20 MiB pages
  // [B, B+20) and [B+40, B+60) mapped, the rest of the 6-page reservation (100 MiB device:
  // 9/8 -> 112.5 MiB -> 6 pages) unmapped. Occupied: [B, B+10) and [B+40, B+60).
  test::TestDevice device;
  device.total = 100 * MiB;
  test::RecordingSink sink;
  CachingAllocator alloc(*parseAllocConf("expandable_segments:True"), &device, &sink);
  alloc.setCheckLevel(CheckLevel::kExpensive);
  const Addr B = 0x7e0000000000ull - 0x100000000ull;
  SeedSegment seg = ringWindowSegment(B);
  seg.blocks = {SeedBlock{B, 10 * MiB, 10 * MiB, false, 1}, SeedBlock{B + 40 * MiB, 20 * MiB, 20 * MiB, false, 2}};
  auto handles = alloc.seed(std::vector<SeedSegment>{seg});
  ASSERT_TRUE(handles.ok()) << handles.message();
  ASSERT_EQ(handles->size(), 2u);
  EXPECT_EQ(alloc.stats().reserved_bytes[kAggregate].current, static_cast<std::int64_t>(40 * MiB));
  // The free 10 MiB after the first block fits exactly: no mapping.
  auto a = alloc.malloc(10 * MiB, 0, 3);
  EXPECT_EQ(a.addr, B + 10 * MiB);
  EXPECT_EQ(sink.count(Action::kSegmentMap), 0u);
  // 30 MiB: the 20 MiB hole between the mapped ranges is too small (an occupied block
  // follows), so the tail grows: two pages mapped at B+60.
  auto b = alloc.malloc(30 * MiB, 0, 4);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.addr, B + 60 * MiB);
  ASSERT_EQ(sink.count(Action::kSegmentMap), 1u);
  EXPECT_EQ(sink.events[sink.events.size() - 2].addr, B + 60 * MiB);
  EXPECT_EQ(sink.events[sink.events.size() - 2].size, 40 * MiB);
  EXPECT_EQ(alloc.stats().reserved_bytes[kAggregate].current, static_cast<std::int64_t>(80 * MiB));
  // Everything freed and released: every page unmapped, the reservation gone.
  for (auto h : *handles) alloc.free(h);
  alloc.free(a.block);
  alloc.free(b.block);
  alloc.emptyCache();
  EXPECT_EQ(alloc.stats().reserved_bytes[kAggregate].current, 0);
  EXPECT_EQ(alloc.invariantFailure(), "");
}

// A recorded expandable segment larger than any GPU's address space is refused with a message,
// not modelled with a page map of that size (the what-if fuzzer's 2^62-byte segment wanted 256 GiB
// for the map), and a device whose 9/8 reservation would exceed it reserves at most 2^48 bytes.
TEST(Settings2026, ExpandableReservationsStayWithinAnAddressSpace) {
  test::TestDevice device;
  device.total = 100 * MiB;
  test::RecordingSink sink;
  CachingAllocator alloc(*parseAllocConf("expandable_segments:True"), &device, &sink);
  SeedSegment seg;
  seg.addr = 0x7e0000000000ull;
  seg.size = ByteCount{1} << 62;
  seg.is_expandable = true;
  seg.mapped = {{seg.addr, 20 * MiB}};
  auto handles = alloc.seed(std::vector<SeedSegment>{seg});
  ASSERT_FALSE(handles.ok());
  EXPECT_NE(handles.message().find("more than a GPU's address space"), std::string::npos) << handles.message();

  test::TestDevice huge;
  huge.total = ByteCount{1} << 60;
  CachingAllocator big(*parseAllocConf("expandable_segments:True"), &huge, &sink);
  auto a = big.malloc(30 * MiB, 0, 1);
  EXPECT_NE(a.addr, 0u);
  EXPECT_LE(big.stats().reserved_bytes[kAggregate].current, static_cast<std::int64_t>(40 * MiB));
}

// A seeded expandable segment's blocks lie each inside one mapped range: a block that runs into
// the unmapped pages after its range (a damaged trace) is refused, not carved into a chain whose
// blocks overlap (the what-if fuzzer's heap overflow in the page map, fuzz/findings history).
TEST(SeedExpandable, ABlockCrossingItsMappedRangeIsRefused) {
  test::TestDevice device;
  device.total = 100 * MiB;
  test::RecordingSink sink;
  CachingAllocator alloc(*parseAllocConf("expandable_segments:True"), &device, &sink);
  const Addr B = 0x7e0000000000ull - 0x100000000ull;
  SeedSegment seg = ringWindowSegment(B);
  seg.blocks = {SeedBlock{B + 10 * MiB, 20 * MiB, 20 * MiB, false, 1}};  // [B+10, B+30): past the first range
  auto handles = alloc.seed(std::vector<SeedSegment>{seg});
  ASSERT_FALSE(handles.ok());
  EXPECT_NE(handles.message().find("crosses the edge of the mapped range"), std::string::npos) << handles.message();
  seg.blocks = {SeedBlock{B + 10 * MiB, 10 * MiB, 10 * MiB, false, 1}};  // [B+10, B+20): inside
  CachingAllocator ok_alloc(*parseAllocConf("expandable_segments:True"), &device, &sink);
  EXPECT_TRUE(ok_alloc.seed(std::vector<SeedSegment>{seg}).ok());
}

// A what-if can hand the model an oversize free block that is part of a split segment: a window's
// seed recorded without max_split_size, replayed with it (the what-if fuzzer's SEGV, where torch's
// release_available_cached_blocks released such a fragment as if it were a segment and the chain
// of its neighbour pointed at a reused block). The fragment is not a segment: it stays cached,
// the malloc fails cleanly, and the whole segment goes back once its other block is freed.
TEST(SeedWindow, AnOversizeFragmentOfASplitSegmentIsNotReleasedAsASegment) {
  test::TestDevice device;
  device.total = 1024 * MiB;
  device.capacity = 100 * MiB;  // a new 150 MiB segment does not fit
  test::RecordingSink sink;
  CachingAllocator alloc(*parseAllocConf("max_split_size_mb:64"), &device, &sink);
  alloc.setCheckLevel(CheckLevel::kExpensive);
  const Addr A = 0x7f0000000000ull;
  SeedSegment seg;
  seg.addr = A;
  seg.size = 200 * MiB;
  seg.blocks = {SeedBlock{A, 2 * MiB, 2 * MiB, false, 1}};  // [A+2, A+200) is a free 198 MiB fragment
  auto handles = alloc.seed(std::vector<SeedSegment>{seg});
  ASSERT_TRUE(handles.ok()) << handles.message();
  EXPECT_FALSE(alloc.malloc(150 * MiB, 0, 2).ok());
  EXPECT_EQ(sink.count(Action::kSegmentFree), 0u);
  EXPECT_EQ(alloc.invariantFailure(), "");
  EXPECT_EQ(alloc.stats().reserved_bytes[kAggregate].current, static_cast<std::int64_t>(200 * MiB));
  alloc.free((*handles)[0]);
  alloc.emptyCache();
  ASSERT_EQ(sink.count(Action::kSegmentFree), 1u);
  EXPECT_EQ(sink.events.back().addr, A);
  EXPECT_EQ(sink.events.back().size, 200 * MiB);
  EXPECT_EQ(alloc.invariantFailure(), "");
}

// Every block and segment torch makes is a multiple of 512 bytes; a seed that is not is damage,
// refused with a message (the fuzzer's segment of 6,176,309,227 bytes).
TEST(SeedWindow, SizesOffTheFiveHundredTwelveByteGrainAreRefused) {
  test::TestDevice device;
  CachingAllocator alloc(AllocatorConfig{}, &device);
  SeedSegment seg;
  seg.addr = 0x7f0000000000ull;
  seg.size = 20 * MiB + 1;
  auto handles = alloc.seed(std::vector<SeedSegment>{seg});
  ASSERT_FALSE(handles.ok());
  EXPECT_NE(handles.message().find("not a multiple of 512"), std::string::npos) << handles.message();
  seg.size = 20 * MiB;
  seg.blocks = {SeedBlock{seg.addr, 1000, 1000, false, 1}};
  handles = alloc.seed(std::vector<SeedSegment>{seg});
  ASSERT_FALSE(handles.ok());
  EXPECT_NE(handles.message().find("not a multiple of 512"), std::string::npos) << handles.message();
}

}  // namespace
}  // namespace reservoir::sim
