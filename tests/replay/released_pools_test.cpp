// Private-pool segments given back before the dump (conformance/released_pools.h): which of them
// the rule routes to the pool, by what, and that the ones the recording made in the default pools
// (the generator state capture_begin allocates on the capture stream) stay there.
#include <gtest/gtest.h>

#include <algorithm>

#include "conformance/released_pools.h"
#include "reservoir/replay/conformance.h"
#include "reservoir/traces/reader.h"
#include "reservoir/traces/window_start.h"
#include "test_paths.h"

namespace reservoir::replay {
namespace {

struct Loaded {
  traces::Snapshot snap;
  std::vector<detail::PoolRange> ranges;
};

Expected<traces::Snapshot> readPoolTrace(const char* name) {
  return traces::readSnapshotFile((test::testDataDir() / "traces/pools-released" / name).string());
}

// Whether the program releases a private pool: an empty_cache op whose route names it.
bool releasesPool(const Program& program, const std::optional<traces::PoolId>& pool = std::nullopt) {
  return std::any_of(program.ops.begin(), program.ops.end(), [&](const Op& op) {
    const auto& named = routeOf(program, op).pool;
    return op.kind == OpKind::kEmptyCache && named.has_value() && (!pool || named == pool);
  });
}

Loaded load(const char* name) {
  Loaded out;
  auto snap = readPoolTrace(name);
  EXPECT_TRUE(snap.ok()) << snap.message();
  if (!snap.ok()) return out;
  out.snap = std::move(*snap);
  const std::size_t dev = out.snap.busiestDevice();
  const auto requests = traces::buildRequestStream(out.snap.devices[dev], out.snap.extras);
  auto start = traces::rebuildWindowStart(out.snap, dev, requests);
  EXPECT_TRUE(start.ok()) << start.message();
  if (start.ok()) out.ranges = detail::releasedPoolRanges(out.snap, out.snap.devices[dev], *start);
  return out;
}

const detail::PoolRange* rangeAt(const Loaded& l, Addr addr) {
  const auto it = std::find_if(l.ranges.begin(), l.ranges.end(), [&](const auto& r) { return r.begin == addr; });
  return it == l.ranges.end() ? nullptr : &*it;
}

TEST(ReleasedPools, AReleasedGraphsSegmentsGoToItsPoolByStackOrByStream) {
  const Loaded l = load("pool-graph-released.pickle.zst");
  ASSERT_EQ(l.ranges.size(), 2u);
  // The captured forward's 2 MiB segment (event 170): its stack allocated in the pool's final segments.
  const auto* forward = rangeAt(l, 0x7fb7c8c00000ull);
  ASSERT_NE(forward, nullptr);
  EXPECT_EQ(forward->pool, (traces::PoolId{1, 0}));
  EXPECT_FALSE(forward->by_stream);
  EXPECT_EQ(forward->from_event, 170u);
  EXPECT_EQ(forward->to_event, 244u);  // given back by the empty_cache after the graphs were dropped
  // The captured backward's 20 MiB segment: no frames (autograd's thread), so its stream's pool.
  const auto* backward = rangeAt(l, 0x7fb7d8000000ull);
  ASSERT_NE(backward, nullptr);
  EXPECT_TRUE(backward->by_stream);
  EXPECT_EQ(backward->to_event, 245u);
  // capture_begin's generator state (event 161, on the capture stream, before the capture) is the
  // default pool's: its frames name no pool, so the stream does not decide it.
  EXPECT_EQ(rangeAt(l, 0x7fb7bfa00000ull), nullptr);
}

TEST(ReleasedPools, AMemPoolsSegmentsAreFoundFromTheStacksOfItsBody) {
  const Loaded l = load("pool-mempool-released.pickle.zst");
  ASSERT_EQ(l.ranges.size(), 2u);
  for (const auto& r : l.ranges) {
    EXPECT_EQ(r.pool, (traces::PoolId{0, 1}));
    EXPECT_FALSE(r.by_stream);  // stream 0 holds both pools' segments: it decides nothing
  }
  // The segment made by `kept.append(...)` at event 8 is found in the second round: its other
  // allocations' stacks (the MemPool body's forward) allocated in the pool's final segments.
  ASSERT_NE(rangeAt(l, 0x7fa1e2000000ull), nullptr);
  EXPECT_EQ(rangeAt(l, 0x7fa1e2000000ull)->from_event, 8u);
}

// Entries that name their pool (newer torch; the torch backend's own recording, annotated): the
// released segments come from the pool ids, no stacks needed (this trace has no frames).
TEST(ReleasedPools, EntriesThatNameTheirPoolGiveTheReleasedSegments) {
  auto snap = readPoolTrace("named-graph-released.pickle.zst");
  ASSERT_TRUE(snap.ok()) << snap.message();
  const std::size_t dev = snap->busiestDevice();
  const auto requests = traces::buildRequestStream(snap->devices[dev], snap->extras);
  auto start = traces::rebuildWindowStart(*snap, dev, requests);
  ASSERT_TRUE(start.ok());
  const auto named = detail::namedPoolRanges(*snap, snap->devices[dev], *start);
  ASSERT_EQ(named.size(), 2u);
  EXPECT_EQ(named[0].begin, 0x7fb7c8c00000ull);
  EXPECT_EQ(named[0].to_event, 244u);
  EXPECT_EQ(named[1].begin, 0x7fb7d8000000ull);
  EXPECT_EQ(named[1].pool, (traces::PoolId{1, 0}));
  // With no frames anywhere, neither stacks nor streams decide anything (capture_begin's default
  // segment on the capture stream would look like the capture's own).
  EXPECT_TRUE(detail::releasedPoolRanges(*snap, snap->devices[dev], *start).empty());
}

TEST(ReleasedPools, ATraceWithoutPrivatePoolsHasNone) {
  auto snap = traces::readSnapshotFile((test::samplesDir() / "resume-tiny/resume-main.rank0.pickle").string());
  ASSERT_TRUE(snap.ok());
  const std::size_t dev = snap->busiestDevice();
  const auto requests = traces::buildRequestStream(snap->devices[dev], snap->extras);
  auto start = traces::rebuildWindowStart(*snap, dev, requests);
  ASSERT_TRUE(start.ok());
  EXPECT_TRUE(detail::releasedPoolRanges(*snap, snap->devices[dev], *start).empty());
}

// The whole replay on these traces, and on the program the what-ifs replay: exact, where each
// diverged before (the pools' own empty_cache and release included).
TEST(ReleasedPools, CheckAndTheNoEditReplayAreExact) {
  for (const char* name : {"pool-graph-released.pickle.zst", "pool-graph-released-mid.pickle.zst",
                           "pool-graph-released-expandable.pickle.zst", "pool-mempool-released.pickle.zst",
                           "named-graph-released.pickle.zst"}) {
    SCOPED_TRACE(name);
    auto snap = readPoolTrace(name);
    ASSERT_TRUE(snap.ok()) << snap.message();
    ConformanceOptions opts;
    Program program;
    opts.program = &program;
    auto report = runConformance(*snap, snap->busiestDevice(), opts);
    ASSERT_TRUE(report.ok()) << report.message();
    EXPECT_FALSE(report->first_divergence.has_value()) << report->first_divergence->expected;
    EXPECT_TRUE(releasesPool(program));  // the release is in the program
  }
}

// A pool that gave back every segment before the dump: nothing in the snapshot names it. The
// replay takes the segment the recording made where the model reused a cached block for a private
// pool's, the pool's other segments follow by stack and stream, and the replay is exact (it
// diverged at the pool's first segment before); the program releases the inferred pool.
TEST(ReleasedPools, APoolThatGaveBackEverySegmentIsInferredWhereTheReplayDeparted) {
  for (const auto& [name, first_segment] : {std::pair{"pool-mempool-gone.pickle.zst", std::size_t{67}},
                                            std::pair{"pool-graph-gone.pickle.zst", std::size_t{164}}}) {
    SCOPED_TRACE(name);
    auto snap = readPoolTrace(name);
    ASSERT_TRUE(snap.ok()) << snap.message();
    EXPECT_TRUE(std::none_of(snap->segments.begin(), snap->segments.end(),
                             [](const auto& s) { return !s.pool.isDefault(); }))
        << "the dump shows no private pool";
    const auto& trace = snap->devices[snap->busiestDevice()];
    ASSERT_EQ(trace.events[first_segment].action, traces::Action::kSegmentAlloc);
    // The guess itself: a segment given back before the dump, made where the model reused a block.
    sim::SimEvent reused;
    reused.action = traces::Action::kAlloc;
    const auto seed = detail::inferredPoolSeed(*snap, trace, first_segment, reused, {});
    ASSERT_TRUE(seed.has_value());
    EXPECT_EQ(seed->pool, (traces::PoolId{-1, 1}));
    sim::SimEvent made = reused;
    made.action = traces::Action::kSegmentAlloc;
    EXPECT_FALSE(detail::inferredPoolSeed(*snap, trace, first_segment, made, {})) << "the model made a segment too";
    EXPECT_FALSE(detail::inferredPoolSeed(*snap, trace, first_segment + 1, reused, {})) << "not a segment_alloc";
    const detail::PoolSeed seeds[] = {*seed};
    EXPECT_FALSE(detail::inferredPoolSeed(*snap, trace, first_segment, reused, seeds)) << "seeded already";

    ConformanceOptions opts;
    Program program;
    opts.program = &program;
    auto report = runConformance(*snap, snap->busiestDevice(), opts);
    ASSERT_TRUE(report.ok()) << report.message();
    EXPECT_FALSE(report->first_divergence.has_value()) << report->first_divergence->event_index;
    EXPECT_TRUE(std::any_of(report->notes.begin(), report->notes.end(), [](const std::string& n) {
      return n.find("private pool(s) that no final segment shows") != std::string::npos;
    }));
    ASSERT_EQ(program.private_pools.size(), 1u);
    EXPECT_EQ(program.private_pools[0], (traces::PoolId{-1, 1}));
    EXPECT_TRUE(releasesPool(program, traces::PoolId{-1, 1}));
  }
}

// A guess that does not make the replay exact is not kept: under a fraction the run did not have
// (150 MB, under this run's peak), the replay diverges where it did without the guess, and says
// what was tried.
TEST(ReleasedPools, AnInferredPoolIsKeptOnlyWhenItMakesTheReplayExact) {
  auto snap = readPoolTrace("pool-mempool-gone.pickle.zst");
  ASSERT_TRUE(snap.ok()) << snap.message();
  ConformanceOptions opts;
  opts.env.fraction = 0.001;
  opts.find_missing_fraction = false;
  Program program;
  opts.program = &program;
  auto report = runConformance(*snap, snap->busiestDevice(), opts);
  ASSERT_TRUE(report.ok()) << report.message();
  ASSERT_TRUE(report->first_divergence.has_value());
  EXPECT_EQ(report->first_divergence->event_index, 67u);
  EXPECT_TRUE(program.private_pools.empty());
  EXPECT_TRUE(std::any_of(report->notes.begin(), report->notes.end(), [](const std::string& n) {
    return n.find("did not make the replay exact") != std::string::npos;
  }));
}

}  // namespace
}  // namespace reservoir::replay
