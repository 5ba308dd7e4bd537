// The segment history: reserved ranges and the blocks in them over events, from the recording
// (segment events on top of the window's start state).
#include <gtest/gtest.h>

#include "reservoir/replay/segment_history.h"
#include "reservoir/replay/session.h"
#include "reservoir/replay/trace.h"
#include "test_paths.h"

namespace reservoir::replay {
namespace {

// An entry of `s` (its stream interned in `s`'s extras).
traces::TraceEvent ev(traces::Snapshot& s, traces::Action a, Addr addr, ByteCount size,
                      traces::StreamValue stream = 7) {
  traces::TraceEvent e;
  e.action = a;
  e.addr = addr;
  e.size = size;
  s.setStream(e, stream);
  return e;
}

constexpr ByteCount kMiB = 1024 * 1024;

// A segment and an expandable range, a block in each, a partial unmap, then all freed.
traces::Snapshot smallSnapshot() {
  using traces::Action;
  traces::Snapshot s;
  traces::DeviceTrace d;
  const Addr seg = 0x10000000, exp = 0x40000000;
  d.events = {ev(s, Action::kSegmentAlloc, seg, 2 * kMiB),                  // 0
              ev(s, Action::kAlloc, seg, kMiB),                             // 1
              ev(s, Action::kSegmentMap, exp, 40 * kMiB, 9),                // 2
              ev(s, Action::kAlloc, exp, 20 * kMiB, 9),                     // 3
              ev(s, Action::kFreeRequested, seg, kMiB),                     // 4
              ev(s, Action::kFreeCompleted, seg, kMiB),                     // 5
              ev(s, Action::kSegmentFree, seg, 2 * kMiB),                   // 6
              ev(s, Action::kFreeRequested, exp, 20 * kMiB, 9),             // 7
              ev(s, Action::kFreeCompleted, exp, 20 * kMiB, 9),             // 8
              ev(s, Action::kSegmentUnmap, exp + 20 * kMiB, 20 * kMiB, 9),  // 9
              ev(s, Action::kSegmentUnmap, exp, 20 * kMiB, 9)};             // 10
  s.devices.push_back(std::move(d));
  return s;
}

TEST(SegmentHistory, SpansFollowTheSegmentEvents) {
  const auto snap = smallSnapshot();
  auto h = segmentHistory(snap, 0);
  ASSERT_TRUE(h) << h.message();
  EXPECT_EQ(h->events, 11u);
  ASSERT_EQ(h->segments.size(), 3u);  // the segment, the mapped range, its half left mapped
  const SegmentSpan& a = h->segments[0];
  EXPECT_EQ(a.addr, 0x10000000u);
  EXPECT_EQ(a.size, 2 * kMiB);
  EXPECT_EQ(a.begin, 0u);
  EXPECT_EQ(a.end, 6u);
  EXPECT_FALSE(a.expandable);
  const SegmentSpan& m = h->segments[1];
  EXPECT_TRUE(m.expandable);
  EXPECT_EQ(m.stream, 9u);
  EXPECT_EQ(m.begin, 2u);
  EXPECT_EQ(m.end, 9u);  // the unmap of its upper half ends it ...
  const SegmentSpan& rest = h->segments[2];
  EXPECT_EQ(rest.addr, 0x40000000u);  // ... and its lower half goes on
  EXPECT_EQ(rest.size, 20 * kMiB);
  EXPECT_EQ(rest.begin, 9u);
  EXPECT_EQ(rest.end, 10u);
  ASSERT_EQ(h->blocks.size(), 2u);
  EXPECT_EQ(h->blocks[0].begin, 1u);
  EXPECT_EQ(h->blocks[0].end, 5u);  // until free_completed, not free_requested
  EXPECT_EQ(h->blocks[0].segment, 0u);
  EXPECT_EQ(h->blocks[1].segment, 1u);
  EXPECT_EQ(h->segmentAt(4, 0x10000000 + 5), 0u);
  EXPECT_EQ(h->segmentAt(6, 0x10000000 + 5), BlockSpan::kNoSegment);
  EXPECT_EQ(h->segmentAt(9, 0x40000000 + 25 * kMiB), BlockSpan::kNoSegment);
  EXPECT_EQ(h->segmentAt(9, 0x40000000 + 5 * kMiB), 2u);
  EXPECT_EQ(h->blockAt(3, 0x10000000 + 100), 0u);
  EXPECT_EQ(h->blockAt(5, 0x10000000 + 100), SegmentHistory::kNoBlock);   // freed at 5
  EXPECT_EQ(h->blockAt(3, 0x10000000 + kMiB), SegmentHistory::kNoBlock);  // past its end
  EXPECT_EQ(h->blockAt(7, 0x40000000 + kMiB), 1u);
}

TEST(SegmentHistory, NoSuchDevice) {
  const auto snap = smallSnapshot();
  EXPECT_FALSE(segmentHistory(snap, 3));
}

// On real traces (cudaMalloc'd segments, expandable segments, a ring-buffer window that starts
// mid-run), the spans alive after each event add up to the recorded reserved bytes.
void expectReservedMatches(const std::string& rel) {
  SCOPED_TRACE(rel);
  auto t = readTrace((test::samplesDir() / rel).string());
  ASSERT_TRUE(t) << t.message();
  auto load = buildLoadStage(std::move(*t));
  ASSERT_TRUE(load) << load.message();
  const auto& l = **load;
  auto h = segmentHistory(l.snapshot(), l.device_index);
  ASSERT_TRUE(h) << h.message();
  ASSERT_EQ(h->events, l.series.size());
  std::vector<std::int64_t> diff(h->events + 1, 0);
  for (const auto& s : h->segments) {
    diff[s.begin] += static_cast<std::int64_t>(s.size);
    diff[s.end] -= static_cast<std::int64_t>(s.size);
  }
  std::int64_t reserved = 0;
  for (std::size_t e = 0; e < h->events; ++e) {
    reserved += diff[e];
    ASSERT_EQ(reserved, l.series.reserved[e]) << "event " << e;
  }
  std::size_t inside = 0;
  for (const auto& b : h->blocks) inside += b.segment != BlockSpan::kNoSegment;
  EXPECT_GT(h->blocks.size(), 0u);
  EXPECT_EQ(inside, h->blocks.size()) << "blocks outside every segment";
}

TEST(SegmentHistory, ReservedMatchesTheRecording) {
  expectReservedMatches("resume-tiny/resume-main.rank0.pickle");
  expectReservedMatches("resume-expandable/resume-main.rank0.pickle");
  expectReservedMatches("truncated/truncated-default-s22.pickle");
}

}  // namespace
}  // namespace reservoir::replay
