// The real allocator's own recording, replayed through the model, with the pools the backend ran
// its requests in (replay/recording_pools.h): a recording without stacks cannot route an
// out-of-memory inside a MemPool by its call stack, the backend's knowledge can.
#include <gtest/gtest.h>

#include "reservoir/replay/conformance.h"
#include "reservoir/replay/edited_program.h"
#include "reservoir/replay/recording_pools.h"
#include "reservoir/replay/trace.h"
#include "reservoir/replay/whatif.h"
#include "reservoir/traces/reader.h"
#include "test_paths.h"

namespace reservoir::replay {
namespace {

struct Case {
  Trace trace;
  PreparedTrace prepared;
  EditedProgram program;
};

// The MemPool trace that runs out of memory inside the pool with expandable segments (issue 13).
std::filesystem::path poolOomPath() { return test::testDataDir() / "traces" / "mempool-oom-expandable-s3.pickle.zst"; }

std::unique_ptr<Case> loadPoolOom() {
  auto trace = readTrace(poolOomPath().string());
  EXPECT_TRUE(trace.ok()) << trace.message();
  if (!trace) return nullptr;
  auto c = std::make_unique<Case>();
  c->trace = std::move(*trace);
  auto p = prepareTrace(c->trace.snapshot, c->trace.snap().busiestDevice(), c->trace.environment());
  EXPECT_TRUE(p.ok()) << p.message();
  if (!p) return nullptr;
  c->prepared = std::move(*p);
  c->program = flattenProgram(c->prepared, {});
  return c;
}

// The recording as the backend's allocator makes it: the same entries, no stacks.
traces::Snapshot withoutStacks() {
  auto snap = traces::readSnapshotFile(poolOomPath().string());
  EXPECT_TRUE(snap.ok()) << snap.message();
  traces::Snapshot out = snap ? std::move(*snap) : traces::Snapshot{};
  for (auto& d : out.devices)
    for (auto& e : d.events) e.stack = StackId{};
  return out;
}

ConformanceReport check(const Case& c, const traces::Snapshot& snap) {
  ConformanceOptions o;
  o.env = c.trace.environment();
  o.find_missing_fraction = false;
  auto r = runConformance(snap, c.trace.snap().busiestDevice(), o);
  EXPECT_TRUE(r.ok()) << r.message();
  return r ? std::move(*r) : ConformanceReport{};
}

TEST(RecordedPools, AStacklessRecordingReplaysExactlyWithThePoolsItsRequestsRanIn) {
  const auto c = loadPoolOom();
  ASSERT_TRUE(c);
  ASSERT_FALSE(c->program.private_pools.empty());
  ASSERT_TRUE(check(*c, c->trace.snap()).exact()) << "the source itself is exact (its stacks route the ooms)";
  traces::Snapshot bare = withoutStacks();
  const std::size_t dev = c->trace.snap().busiestDevice();
  EXPECT_FALSE(check(*c, bare).exact()) << "without stacks, an oom in the pool is taken for a default-pool one";
  const RecordedPoolsAnnotation a = annotateRecordedPools(bare, dev, c->program);
  EXPECT_TRUE(a.applied);
  EXPECT_EQ(a.entries, a.mallocs);
  EXPECT_EQ(a.mallocs, c->program.mallocs);
  const ConformanceReport r = check(*c, bare);
  EXPECT_TRUE(r.exact()) << (r.first_divergence ? r.first_divergence->expected : std::string("stats differ"));
}

TEST(RecordedPools, EntriesThatDoNotPairWithTheRequestsAreLeftAlone) {
  const auto c = loadPoolOom();
  ASSERT_TRUE(c);
  traces::Snapshot bare = withoutStacks();
  const std::size_t dev = c->trace.snap().busiestDevice();
  EditedProgram fewer = c->program;
  for (std::size_t i = fewer.ops.size(); i-- > 0;)
    if (fewer.ops[i].kind == BackendOpKind::kMalloc) {
      fewer.ops.erase(fewer.ops.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  const RecordedPoolsAnnotation a = annotateRecordedPools(bare, dev, fewer);
  EXPECT_FALSE(a.applied);
  EXPECT_EQ(a.entries, a.mallocs + 1);
  for (const auto& e : bare.devices[dev].events) EXPECT_FALSE(bare.extra(e).has_pool);
}

}  // namespace
}  // namespace reservoir::replay
