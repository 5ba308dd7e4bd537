// The GPU backends against the model on a real GPU (label "gpu"). Each test is its own process
// under ctest, which the torch backend needs (the allocator's state lives as long as the process).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "reservoir/replay/backend.h"
#include "reservoir/replay/backend_replay.h"
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

// The regression traces with private pools: MemPool (synthetic, recorded by torch on the H200;
// with expandable segments; with ooms; a ring buffer), a window after a CUDA graph, and
// tests/data/traces/pools/ (recorded by scripts/device/pool_workloads.py).
std::vector<std::string> poolTraces() {
  std::vector<std::string> out = {"mempool-s7.pickle.zst", "mempool-expandable-s8.pickle.zst",
                                  "mempool-oom-expandable-s3.pickle.zst", "ring-expandable-mempool-s6.pickle.zst",
                                  "graph-pool/graph-pool.pickle.zst"};
  const auto dir = test::testDataDir() / "traces";
  if (std::filesystem::exists(dir / "pools"))
    for (const auto& e : std::filesystem::directory_iterator(dir / "pools"))
      if (e.path().string().ends_with(".pickle.zst")) out.push_back("pools/" + e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::set<traces::PoolId> privatePoolsOf(const std::vector<sim::SegmentView>& segments) {
  std::set<traces::PoolId> out;
  for (const auto& s : segments)
    if (!s.pool.isDefault()) out.insert(s.pool);
  return out;
}

// `reservoir replay X --backend torch` on a trace with private pools: the pools are the real
// allocator's, the figures equal the model's prediction, the model reproduces the real
// allocator's own recording, and the real run's segments lie in the same private pools.
class TorchPools : public ::testing::TestWithParam<std::string> {};
TEST_P(TorchPools, ReplayOnTheRealAllocatorAsPredicted) {
  auto backend = backendOrSkip("torch");
  if (!backend) GTEST_SKIP() << "this build has no torch backend";
  auto trace = readTrace((test::testDataDir() / "traces" / GetParam()).string());
  ASSERT_TRUE(trace.ok()) << trace.message();
  const ReplayEnvironment env = trace->environment();
  auto p = prepareTrace(trace->snapshot, trace->snap().busiestDevice(), env);
  ASSERT_TRUE(p.ok()) << p.message();
  auto run = chooseEditedRunAsWhatIf(*p, WhatIfOptions{});
  ASSERT_TRUE(run.ok()) << run.message();
  std::vector<std::unique_ptr<ReplayBackend>> impls;
  impls.push_back(std::move(backend));
  auto report = runBackendReplay(*p, {}, *run, impls, BackendReplayOptions{});
  if (!report && report.message().find("no CUDA device") != std::string::npos) GTEST_SKIP() << report.message();
  ASSERT_TRUE(report.ok()) << report.message();
  ASSERT_FALSE(report->program.private_pools.empty()) << "the program lost the trace's private pools";
  ASSERT_EQ(report->runs.size(), 1u);
  const BackendRun& r = report->runs.front();
  EXPECT_TRUE(r.vs_model.figuresEqual()) << why(r.vs_model);
  ASSERT_TRUE(r.own_recording.has_value());
  EXPECT_TRUE(r.own_recording->exact());
  EXPECT_TRUE(report->exact);
  // The pools the model's final segments lie in; a ring-buffer trace's window runs from an empty
  // allocator on the GPU, so it is compared with the model's run of the same.
  std::set<traces::PoolId> predicted = privatePoolsOf(report->model.segments);
  if (!report->program.seed.empty()) {
    const EditedProgram unseeded = report->program.withoutSeed();
    ReplayJob job;
    job.prepared = &*p;
    job.program = &unseeded;
    job.config = run->config;
    job.fraction = run->fraction;
    job.usable = run->usable;
    auto m = makeModelBackend()->run(job);
    ASSERT_TRUE(m.ok()) << m.message();
    predicted = privatePoolsOf(m->segments);
  }
  EXPECT_EQ(privatePoolsOf(r.result.segments), predicted);
  const bool noted = std::any_of(r.result.notes.begin(), r.result.notes.end(), [](const std::string& n) {
    return n.starts_with("private pools on the real allocator");
  });
  EXPECT_TRUE(noted);
}
INSTANTIATE_TEST_SUITE_P(Regression, TorchPools, ::testing::ValuesIn(poolTraces()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string s = i.param.substr(0, i.param.find(".pickle"));
                           for (char& c : s)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

}  // namespace
}  // namespace reservoir::replay
