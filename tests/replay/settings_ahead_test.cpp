// A sweep's settings candidates replayed ahead on a thread of their own: each run is the one a
// worker would make, and a run is made once, by whoever claims it first.
#include <gtest/gtest.h>

#include "analysis/settings_ahead.h"
#include "reservoir/replay/trace.h"
#include "test_paths.h"

namespace reservoir::replay {
namespace {

struct Bench {
  Expected<Trace> trace;
  Expected<PreparedTrace> prepared;
  std::vector<sim::AllocatorConfig> configs;
};

Bench prepareSample() {
  Bench s{readTrace((test::samplesDir() / "resume-tiny/resume-main.rank0.pickle").string()), Status::error("unset"), {}};
  if (!s.trace) return s;
  s.prepared = prepareTrace(s.trace->snapshot, s.trace->snap().busiestDevice(), ReplayEnvironment{});
  for (const char* conf : {"expandable_segments:True", "max_split_size_mb:64", "roundup_power2_divisions:4"})
    s.configs.push_back(*sim::parseAllocConf(conf));
  return s;
}

void expectSameRun(const RunResult& a, const RunResult& b, std::size_t k) {
  EXPECT_EQ(a.peak_reserved.bytes, b.peak_reserved.bytes) << k;
  EXPECT_EQ(a.peak_reserved.op, b.peak_reserved.op) << k;
  EXPECT_EQ(a.peak_allocated.bytes, b.peak_allocated.bytes) << k;
  EXPECT_EQ(a.final_reserved, b.final_reserved) << k;
  EXPECT_EQ(a.mean_reserved, b.mean_reserved) << k;
  EXPECT_EQ(a.driver.cuda_mallocs, b.driver.cuda_mallocs) << k;
}

TEST(SettingsAhead, TheThreadsRunsAreTheRunsAWorkerMakes) {
  Bench s = prepareSample();
  ASSERT_TRUE(s.trace.ok()) << s.trace.message();
  ASSERT_TRUE(s.prepared.ok()) << s.prepared.message();
  RunSettings base;
  base.config = s.prepared->recorded_config;
  SettingsAhead ahead(*s.prepared, {}, base, s.configs, true);
  ahead.finish(true);  // the thread runs every config: none is left to claim
  for (std::size_t k = 0; k < s.configs.size(); ++k) {
    EXPECT_FALSE(ahead.claim(k)) << k;
    const auto run = ahead.take(k);
    ASSERT_TRUE(run.has_value()) << k;
    expectSameRun(*run, ahead.replay(k), k);
  }
  // The settings change the run (else this compares nothing): expandable segments reserve otherwise.
  RunSettings recorded = base;
  EXPECT_NE(replayProgram(*s.prepared, {}, recorded).driver.cuda_mallocs, ahead.replay(0).driver.cuda_mallocs);
}

TEST(SettingsAhead, WithoutTheThreadEveryRunIsTheClaimersAndTheSecondClaimFails) {
  Bench s = prepareSample();
  ASSERT_TRUE(s.prepared.ok()) << s.prepared.message();
  RunSettings base;
  base.config = s.prepared->recorded_config;
  SettingsAhead ahead(*s.prepared, {}, base, s.configs, false);
  for (std::size_t k = 0; k < s.configs.size(); ++k) {
    EXPECT_TRUE(ahead.claim(k)) << k;
    EXPECT_FALSE(ahead.claim(k)) << k << ": claimed twice";
  }
  ahead.finish();
  for (std::size_t k = 0; k < s.configs.size(); ++k) EXPECT_FALSE(ahead.take(k).has_value()) << k;
}

}  // namespace
}  // namespace reservoir::replay
