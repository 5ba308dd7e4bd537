// The GPU backends against the model on a real GPU (label "gpu"). Each test is its own process
// under ctest, which the torch backend needs (the allocator's state lives as long as the process).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "reservoir/replay/backend.h"
#include "reservoir/replay/trace.h"
#include "reservoir/traces/reader.h"
#include "reservoir/traces/writer.h"
#include "test_paths.h"

namespace reservoir::replay {
namespace {

struct Case {
  std::shared_ptr<const traces::Snapshot> snapshot;
  CaptureFacts facts;
  PreparedTrace prepared;
  EditedProgram program;
};

std::unique_ptr<Case> synthCase(const std::string& settings, std::size_t events, std::uint64_t seed) {
  SynthOptions o;
  o.events = events;
  o.seed = seed;
  o.settings = settings;
  o.budget = 8ull << 30;
  o.empty_cache_every = 5000;
  auto t = synthesizeTrace(o);
  EXPECT_TRUE(t.ok()) << t.message();
  if (!t) return nullptr;
  auto c = std::make_unique<Case>();
  c->facts.memory_stats = sim::memoryStatsMap(t->final_stats);
  c->snapshot = std::make_shared<const traces::Snapshot>(std::move(t->snapshot));
  ReplayEnvironment env;
  env.capture = std::make_shared<const CaptureFacts>(c->facts);
  auto p = prepareTrace(c->snapshot, 0, env);
  EXPECT_TRUE(p.ok()) << p.message();
  if (!p) return nullptr;
  c->prepared = std::move(*p);
  c->program = flattenProgram(c->prepared, {});
  return c;
}

ReplayJob jobFor(const Case& c) {
  ReplayJob job;
  job.prepared = &c.prepared;
  job.program = &c.program;
  job.config = c.prepared.recorded_config;
  job.fraction = c.prepared.fraction;
  return job;
}

// The backend's plugin, from the build's plugin folder (unless RESERVOIR_PLUGIN_DIR names another).
std::unique_ptr<ReplayBackend> backendOrSkip(const char* name) {
  setenv("RESERVOIR_PLUGIN_DIR", RESERVOIR_TEST_PLUGIN_DIR, /*overwrite=*/0);
  auto b = makeBackend(name);
  if (!b) return nullptr;
  return std::move(*b);
}

std::string why(const BackendComparison& c) {
  if (c.first_difference)
    return "event " + std::to_string(c.first_difference->index) + ": " + c.first_difference->reason + "\n  expected " +
           c.first_difference->expected + "\n  got      " + c.first_difference->got;
  for (const auto* l : {&c.figure_mismatches, &c.stats_mismatches, &c.layout_mismatches})
    if (!l->empty()) return l->front().what + ": expected " + l->front().expected + " got " + l->front().simulated;
  return "";
}

TEST(CudaBackend, ExecutesTheModelsDecisionsAndGivesEverythingBack) {
  auto backend = backendOrSkip("cuda");
  if (!backend) GTEST_SKIP() << "this build has no cuda backend";
  for (const char* settings : {"", "expandable_segments:True"}) {
    SCOPED_TRACE(settings);
    auto c = synthCase(settings, 40'000, 3);
    ASSERT_TRUE(c);
    auto model = makeModelBackend()->run(jobFor(*c));
    ASSERT_TRUE(model.ok());
    ReplayJob job = jobFor(*c);
    job.measure_at = 0;
    auto r = backend->run(job);
    if (!r && r.message().find("no CUDA device") != std::string::npos) GTEST_SKIP() << r.message();
    ASSERT_TRUE(r.ok()) << r.message();
    // The driver places segments its own way, so block choices can differ from the prediction
    // (which uses the recording's addresses); what must hold: every op ran, within capacity.
    EXPECT_EQ(r->ops_executed, c->program.ops.size());
    EXPECT_EQ(r->events.size() > 0, model->events.size() > 0);
    EXPECT_TRUE(r->memory.fits);
    EXPECT_GT(r->timing.driver_allocs, 0u);
    EXPECT_GT(r->timing.alloc_seconds, 0.0);
    EXPECT_FALSE(r->timing.cleanups.empty());
    for (const auto& n : r->notes) EXPECT_EQ(n.find("less free"), std::string::npos) << n;
  }
}

TEST(CudaBackend, NeverTakesMoreThanTheCapacity) {
  auto backend = backendOrSkip("cuda");
  if (!backend) GTEST_SKIP() << "this build has no cuda backend";
  auto c = synthCase("", 20'000, 9);
  ASSERT_TRUE(c);
  ReplayJob job = jobFor(*c);
  job.usable = 1ull << 30;
  auto r = backend->run(job);
  if (!r && r.message().find("no CUDA device") != std::string::npos) GTEST_SKIP() << r.message();
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_LE(r->peak_reserved.bytes, static_cast<std::int64_t>(*job.usable));
  EXPECT_GT(r->ooms, 0u);
  EXPECT_FALSE(r->memory.fits);
}

TEST(TorchBackend, TheModelReproducesTheRealAllocatorsRecording) {
  auto backend = backendOrSkip("torch");
  if (!backend) GTEST_SKIP() << "this build has no torch backend";
  auto c = synthCase("", 60'000, 5);
  ASSERT_TRUE(c);
  ASSERT_GT(c->program.deferred_frees, 0u);
  auto r = backend->run(jobFor(*c));
  if (!r && r.message().find("no CUDA device") != std::string::npos) GTEST_SKIP() << r.message();
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->ops_executed, c->program.ops.size());
  for (const auto& n : r->notes) EXPECT_EQ(n.find("saw no event"), std::string::npos) << n;
  // The model on the real allocator's own recording (its addresses, its record_stream timing).
  auto snap = traces::readSnapshotBytes(r->snapshot_bytes, "torch");
  ASSERT_TRUE(snap.ok()) << snap.message();
  auto facts = std::make_shared<CaptureFacts>();
  facts->memory_stats = sim::memoryStatsMap(r->final_stats);
  ConformanceOptions co;
  co.env.capture = facts;
  auto conf = runConformance(*snap, 0, co);
  ASSERT_TRUE(conf.ok()) << conf.message();
  EXPECT_TRUE(conf->exact()) << (conf->first_divergence
                                     ? conf->first_divergence->expected + " / " + conf->first_divergence->simulated
                                     : std::string("final state"));
}

TEST(TorchBackend, TheWorkedExampleFromLibTorch) {
  auto backend = backendOrSkip("torch");
  if (!backend) GTEST_SKIP() << "this build has no torch backend";
  RESERVOIR_REQUIRE_SHARED_TRACES();
  auto snap = readTrace(test::sharedTrace("cpp/worked-example.cpp-pickle2.pickle").string());
  ASSERT_TRUE(snap.ok()) << snap.message();
  auto p = prepareTrace(snap->snapshot, snap->snap().busiestDevice(), ReplayEnvironment{});
  ASSERT_TRUE(p.ok()) << p.message();
  const EditedProgram prog = flattenProgram(*p, {});
  ReplayJob job;
  job.prepared = &*p;
  job.program = &prog;
  job.config = p->recorded_config;
  auto model = makeModelBackend()->run(job);
  ASSERT_TRUE(model.ok());
  auto r = backend->run(job);
  if (!r && r.message().find("no CUDA device") != std::string::npos) GTEST_SKIP() << r.message();
  ASSERT_TRUE(r.ok()) << r.message();
  const auto cmp = compareResults(*model, *r);
  EXPECT_TRUE(cmp.exact()) << why(cmp);
  EXPECT_EQ(r->final_reserved, 44040192);
}

}  // namespace
}  // namespace reservoir::replay
