// A final-layout mismatch names the field that differs, and its two printed lines never read the
// same (issue: a private-pool segment printed identical expected/simulated lines).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "conformance/final_state_checks.h"
#include "reservoir/replay/segment_views.h"

namespace reservoir::replay {
namespace {

struct FieldCase {
  std::string field;
  std::function<void(sim::SegmentView&)> change;
};

traces::Snapshot oneSegment() {
  traces::Snapshot snap;
  traces::SegmentInfo s;
  s.address = 0x7f0000000000;
  s.total_size = 2u << 20;
  s.allocated_size = 1u << 20;
  s.active_size = 1u << 20;
  s.stream = 7;
  s.is_large = false;
  s.pool = traces::PoolId{1, 0};
  s.first_block = 0;
  s.block_count = 2;
  snap.segments.push_back(s);
  snap.blocks.push_back(traces::BlockInfo{});
  snap.blocks.back().address = s.address;
  snap.blocks.back().size = 1u << 20;
  snap.blocks.back().requested_size = 1u << 20;
  snap.blocks.back().state = traces::BlockState::kActiveAllocated;
  snap.blocks.push_back(traces::BlockInfo{});
  snap.blocks.back().address = s.address + (1u << 20);
  snap.blocks.back().size = 1u << 20;
  snap.blocks.back().state = traces::BlockState::kInactive;
  return snap;
}

sim::SegmentView sameAs(const traces::Snapshot& snap) { return segmentView(snap, snap.segments[0]); }

TEST(LayoutMismatch, EqualLayoutsReportNothing) {
  const auto snap = oneSegment();
  ConformanceReport r;
  detail::compareLayout(snap, 0, {sameAs(snap)}, r);
  EXPECT_TRUE(r.layout_mismatches.empty());
}

TEST(LayoutMismatch, EverySegmentFieldIsNamedAndTheLinesDiffer) {
  const std::vector<FieldCase> cases = {
      {"address", [](sim::SegmentView& v) { v.address += 0x200000; }},
      {"size", [](sim::SegmentView& v) { v.total_size *= 2; }},
      {"stream", [](sim::SegmentView& v) { v.stream = 9; }},
      {"pool kind", [](sim::SegmentView& v) { v.is_large = true; }},
      {"expandable", [](sim::SegmentView& v) { v.is_expandable = true; }},
      {"pool id", [](sim::SegmentView& v) { v.pool = traces::PoolId{}; }},
      {"allocated", [](sim::SegmentView& v) { v.allocated_size = 0; }},
      {"active", [](sim::SegmentView& v) { v.active_size = 0; }},
  };
  const auto snap = oneSegment();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.field);
    auto v = sameAs(snap);
    c.change(v);
    ConformanceReport r;
    detail::compareLayout(snap, 0, {v}, r);
    ASSERT_EQ(r.layout_mismatches.size(), 1u);
    EXPECT_NE(r.layout_mismatches[0].what.find(c.field), std::string::npos) << r.layout_mismatches[0].what;
    EXPECT_NE(r.layout_mismatches[0].expected, r.layout_mismatches[0].simulated);
  }
}

TEST(LayoutMismatch, EveryBlockFieldIsNamedAndTheLinesDiffer) {
  const std::vector<std::pair<std::string, std::function<void(sim::BlockInfoView&)>>> cases = {
      {"address", [](sim::BlockInfoView& b) { b.address += 512; }},
      {"size", [](sim::BlockInfoView& b) { b.size -= 512; }},
      {"state", [](sim::BlockInfoView& b) { b.state = traces::BlockState::kActivePendingFree; }},
      {"requested size", [](sim::BlockInfoView& b) { b.requested_size -= 1; }},
  };
  const auto snap = oneSegment();
  for (const auto& [field, change] : cases) {
    SCOPED_TRACE(field);
    auto v = sameAs(snap);
    change(v.blocks[0]);
    ConformanceReport r;
    detail::compareLayout(snap, 0, {v}, r);
    ASSERT_EQ(r.layout_mismatches.size(), 1u);
    EXPECT_NE(r.layout_mismatches[0].what.find(field), std::string::npos) << r.layout_mismatches[0].what;
    EXPECT_NE(r.layout_mismatches[0].expected, r.layout_mismatches[0].simulated);
  }
}

}  // namespace
}  // namespace reservoir::replay
