// HandleSlots: a replay keeps each live allocation's block in a slot of the program's own
// lifetimes (an array as small as the most allocations live at once), not in a hash map.
#include <gtest/gtest.h>

#include <algorithm>

#include "reservoir/replay/program.h"
#include "reservoir/replay/trace.h"
#include "reservoir/replay/whatif.h"
#include "reservoir/traces/reader.h"
#include "test_paths.h"

namespace reservoir::replay {
namespace {

Op mallocOf(std::uint32_t id) {
  Op op = makeOp(OpKind::kMalloc);
  op.alloc = AllocationId(id);
  op.size = 512;
  return op;
}
Op freeOf(std::uint32_t id) {
  Op op = makeOp(OpKind::kFree);
  op.alloc = AllocationId(id);
  return op;
}

TEST(HandleSlots, ASlotIsGivenBackAtTheFreeAndReused) {
  Program p;
  p.seed_allocations = {AllocationId(0)};
  // live: 0 (seeded); then 1, 2; 1 freed; 3 takes 1's slot; 0 and 2 freed; 4 takes the last given back.
  p.ops = {mallocOf(1), mallocOf(2), freeOf(1), mallocOf(3), freeOf(0), freeOf(2), mallocOf(4),
           freeOf(7) /* never allocated */, makeOp(OpKind::kEmptyCache), freeOf(1) /* twice */};
  const HandleSlots s = computeHandleSlots(p, 5);
  ASSERT_EQ(s.op.size(), p.ops.size());
  ASSERT_EQ(s.seed.size(), 1u);
  EXPECT_EQ(s.count, 3u) << "at most three allocations are live at once";
  const std::uint32_t s0 = s.seed[0], s1 = s.op[0], s2 = s.op[1];
  EXPECT_NE(s0, s1);
  EXPECT_NE(s1, s2);
  EXPECT_NE(s0, s2);
  EXPECT_EQ(s.op[2], s1) << "a free names its allocation's slot";
  EXPECT_EQ(s.op[3], s1) << "reused once given back";
  EXPECT_EQ(s.op[4], s0);
  EXPECT_EQ(s.op[5], s2);
  EXPECT_EQ(s.op[6], s2) << "the last slot given back is reused first";
  EXPECT_EQ(s.op[7], HandleSlots::kNone) << "an allocation id out of range";
  EXPECT_EQ(s.op[8], HandleSlots::kNone);
  EXPECT_EQ(s.op[9], HandleSlots::kNone) << "a second free of one allocation frees nothing";
}

TEST(HandleSlots, AMallocOfALiveAllocationKeepsItsSlot) {
  Program p;
  p.ops = {mallocOf(0), mallocOf(0), mallocOf(1), freeOf(0)};
  const HandleSlots s = computeHandleSlots(p, 2);
  EXPECT_EQ(s.op[0], s.op[1]);
  EXPECT_EQ(s.op[3], s.op[0]);
  EXPECT_NE(s.op[2], s.op[0]);
  EXPECT_EQ(s.count, 2u);
}

// The runner uses the prepared trace's slots, and computes its own when they do not fit the
// program: both replay the same run, edits included (a release frees through the slots).
TEST(HandleSlots, AReplayIsTheSameWithThePreparedSlotsOrItsOwn) {
  auto trace = readTrace((test::samplesDir() / "resume-tiny/resume-main.rank0.pickle").string());
  ASSERT_TRUE(trace.ok()) << trace.message();
  auto prepared = prepareTrace(trace->snapshot, trace->snap().busiestDevice(), ReplayEnvironment{});
  ASSERT_TRUE(prepared.ok()) << prepared.message();
  ASSERT_TRUE(hasHandleSlots(prepared->program));
  const HandleSlots& slots = prepared->program.handle_slots;
  EXPECT_TRUE(slots.op.empty()) << "the ops carry their slots: no memory per op";
  EXPECT_GT(slots.count, 0u);
  EXPECT_LT(slots.count, prepared->allocation_stacks.size()) << "slots are reused";
  const HandleSlots computed = computeHandleSlots(prepared->program, prepared->allocation_stacks.size());
  for (std::size_t j = 0; j < prepared->program.ops.size(); ++j) ASSERT_EQ(prepared->program.ops[j].slot, computed.op[j]) << j;
  auto edits = resolveEdits(*prepared, {*parseCleanup("after:state_dict_loader.py:load"),
                                        *parseRelease("state_dict_loader.py:load@after:state_dict_loader.py:load")});
  ASSERT_TRUE(edits.ok()) << edits.message();
  RunSettings s;
  s.config = prepared->recorded_config;
  const RunResult with = replayProgram(*prepared, *edits, s);
  PreparedTrace bare = *prepared;
  bare.program.handle_slots = HandleSlots{};  // a program without slots: the runner computes its own
  for (Op& op : bare.program.ops) op.slot = HandleSlots::kNone;
  ASSERT_FALSE(hasHandleSlots(bare.program));
  const RunResult own = replayProgram(bare, *edits, s);
  EXPECT_EQ(with.peak_reserved.bytes, own.peak_reserved.bytes);
  EXPECT_EQ(with.final_reserved, own.final_reserved);
  EXPECT_EQ(with.final_allocated, own.final_allocated);
  ASSERT_EQ(with.at_edits.size(), own.at_edits.size());
  for (std::size_t i = 0; i < with.at_edits.size(); ++i) EXPECT_EQ(with.at_edits[i].reserved, own.at_edits[i].reserved);
  // The release freed blocks through the slots: less is allocated after it than after the cleanup alone.
  auto cleanup = resolveEdits(*prepared, {*parseCleanup("after:state_dict_loader.py:load")});
  ASSERT_TRUE(cleanup.ok()) << cleanup.message();
  const RunResult alone = replayProgram(*prepared, *cleanup, s);
  ASSERT_FALSE(alone.at_edits.empty());
  EXPECT_LT(with.at_edits.back().allocated, alone.at_edits.back().allocated) << "the release freed nothing";
  EXPECT_TRUE(with.invariant_failure.empty()) << with.invariant_failure;
}

}  // namespace
}  // namespace reservoir::replay

namespace reservoir::replay {
namespace {

// An event boundary's op, found by a binary search or by a cursor galloping over a point's gaps:
// the same answer for boundaries in order, repeated, going back, past the end, and on ops that
// share or skip events.
TEST(OpBoundaries, TheCursorAnswersAsTheSearch) {
  Program p;
  std::uint32_t e = 0;
  for (std::uint32_t j = 0; j < 3000; ++j) {
    e += (j * 7919u) % 5;  // 0: an op starting with the one before (its first event is shared)
    p.ops.push_back(makeOp(OpKind::kMalloc, e, e + 1));
  }
  p.events = e + 3;
  auto brute = [&](std::size_t b) {
    std::uint32_t n = 0;
    for (const Op& op : p.ops) n += op.first_event < b ? 1u : 0u;
    return n;
  };
  OpBoundaryCursor cursor(p);
  std::vector<std::size_t> boundaries;
  for (std::size_t b = 0; b <= p.events + 2; b += 3) boundaries.push_back(b);  // in order
  for (std::size_t k = 0; k < 400; ++k) boundaries.push_back((k * 104729u) % (p.events + 4));  // anywhere
  boundaries.push_back(boundaries.back());
  for (const std::size_t b : boundaries) {
    ASSERT_EQ(opAtBoundary(p, b), brute(b)) << "boundary " << b;
    ASSERT_EQ(cursor.at(b), brute(b)) << "boundary " << b;
  }
  EXPECT_EQ(OpBoundaryCursor(Program{}).at(5), 0u);
}

}  // namespace
}  // namespace reservoir::replay
