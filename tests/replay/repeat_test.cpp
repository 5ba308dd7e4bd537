// A run that goes on whole training steps at once where its state repeats (Runner::skipRepeats)
// ends where the run of every op ends: the same result, the same allocator state (addresses,
// blocks, statistics), and a sweep gives the same answers.
#include <gtest/gtest.h>

#include "reservoir/replay/backend.h"
#include "reservoir/replay/report_json.h"
#include "reservoir/replay/sweep.h"
#include "reservoir/replay/whatif.h"
#include "whatif/program_period.h"
#include "whatif/run_engine.h"

namespace reservoir::replay {
namespace {

constexpr std::size_t kStepRequests = 1500;

// A synthetic trace in training steps that repeat (two streams, record_stream frees).
std::shared_ptr<const traces::Snapshot> stepsTrace(std::uint64_t seed, std::size_t step_requests = kStepRequests) {
  SynthOptions o;
  o.events = 90'000;
  o.seed = seed;
  o.step_requests = step_requests;
  o.empty_cache_every = 0;
  o.budget = 8ull << 30;
  auto t = synthesizeTrace(o);
  EXPECT_TRUE(t.ok()) << t.message();
  if (!t) return std::make_shared<const traces::Snapshot>();
  return std::make_shared<const traces::Snapshot>(std::move(t->snapshot));
}

PreparedTrace prepared(std::shared_ptr<const traces::Snapshot> snap) {
  auto p = prepareTrace(std::move(snap), 0, ReplayEnvironment{});
  EXPECT_TRUE(p.ok()) << p.message();
  return p ? std::move(*p) : PreparedTrace{};
}

std::vector<ResolvedEdit> cleanupAt(const PreparedTrace& p, const std::string& point) {
  auto edit = parseCleanup(point);
  EXPECT_TRUE(edit.ok()) << edit.message();
  auto resolved = resolveEdits(p, {*edit});
  EXPECT_TRUE(resolved.ok()) << resolved.message();
  return resolved ? *resolved : std::vector<ResolvedEdit>{};
}

void expectSamePeak(const PeakInfo& a, const PeakInfo& b, const std::string& what) {
  EXPECT_EQ(a.bytes, b.bytes) << what;
  EXPECT_EQ(a.op, b.op) << what;
  EXPECT_EQ(a.event, b.event) << what;
  EXPECT_EQ(a.time_us, b.time_us) << what;
  EXPECT_EQ(a.stack, b.stack) << what;
}

void expectSameState(const sim::CachingAllocator& a, const sim::CachingAllocator& b, const std::string& what) {
  const auto sa = a.segments(), sb = b.segments();
  ASSERT_EQ(sa.size(), sb.size()) << what;
  for (std::size_t i = 0; i < sa.size(); ++i) {
    EXPECT_EQ(sa[i].address, sb[i].address) << what << " segment " << i;
    EXPECT_EQ(sa[i].tag, sb[i].tag) << what << " segment " << i;
    ASSERT_EQ(sa[i].blocks.size(), sb[i].blocks.size()) << what << " segment " << i;
    for (std::size_t k = 0; k < sa[i].blocks.size(); ++k) {
      EXPECT_EQ(sa[i].blocks[k].address, sb[i].blocks[k].address) << what;
      EXPECT_EQ(sa[i].blocks[k].size, sb[i].blocks[k].size) << what;
      EXPECT_EQ(sa[i].blocks[k].requested_size, sb[i].blocks[k].requested_size) << what;
      EXPECT_EQ(sa[i].blocks[k].tag, sb[i].blocks[k].tag) << what;
      EXPECT_EQ(sa[i].blocks[k].state, sb[i].blocks[k].state) << what;
    }
  }
  EXPECT_EQ(sim::memoryStatsMap(a.stats()), sim::memoryStatsMap(b.stats())) << what;
  const auto ea = a.outstandingEvents(), eb = b.outstandingEvents();
  ASSERT_EQ(ea.size(), eb.size()) << what;
  for (std::size_t i = 0; i < ea.size(); ++i) {
    EXPECT_EQ(ea[i].tag, eb[i].tag) << what;
    EXPECT_EQ(ea[i].block_addr, eb[i].block_addr) << what;
    EXPECT_EQ(ea[i].sequence, eb[i].sequence) << what;
  }
}

// Every op replayed, then again going on whole steps where the state repeats.
std::uint64_t expectSameRuns(const PreparedTrace& p, const detail::ProgramPeriod& period,
                             const std::vector<ResolvedEdit>& edits, const RunSettings& s, const std::string& what) {
  detail::Runner every(p, edits, s);
  detail::Runner skipping(p, edits, s);
  skipping.skipRepeats(period);
  const RunResult a = every.run();
  const RunResult b = skipping.run();
  EXPECT_EQ(a.periods_skipped, 0u) << what;
  expectSamePeak(a.peak_reserved, b.peak_reserved, what);
  expectSamePeak(a.peak_allocated, b.peak_allocated, what);
  EXPECT_EQ(a.final_reserved, b.final_reserved) << what;
  EXPECT_EQ(a.final_allocated, b.final_allocated) << what;
  EXPECT_EQ(a.mean_reserved, b.mean_reserved) << what;  // the same sum, op by op
  EXPECT_EQ(a.empty_cache_calls, b.empty_cache_calls) << what;
  EXPECT_EQ(a.segments_allocated, b.segments_allocated) << what;
  EXPECT_EQ(a.driver.cuda_mallocs, b.driver.cuda_mallocs) << what;
  EXPECT_EQ(a.driver.cuda_frees, b.driver.cuda_frees) << what;
  EXPECT_EQ(a.oom.has_value(), b.oom.has_value()) << what;
  EXPECT_EQ(b.invariant_failure, "") << what;
  expectSameState(every.model(), skipping.model(), what);
  return b.periods_skipped;
}

TEST(ProgramPeriod, TrainingStepsAreFoundAndARandomWorkloadHasNone) {
  const PreparedTrace p = prepared(stepsTrace(1));
  const detail::ProgramPeriod period = detail::findProgramPeriod(p.program);
  ASSERT_TRUE(period.found());
  // A step: its requests, and the frees of what the step before left live.
  EXPECT_GT(period.ops, kStepRequests);
  EXPECT_LT(period.ops, 2 * kStepRequests);
  EXPECT_GE(period.end - period.start, p.program.ops.size() * 9 / 10);
  for (std::uint32_t j = period.start; j + period.ops < period.end; ++j)
    ASSERT_TRUE(
        detail::repeatsOp(p.program, p.program.ops[j], p.program.ops[j + period.ops], period.ops, period.allocs))
        << j;
  EXPECT_FALSE(detail::findProgramPeriod(prepared(stepsTrace(1, 0)).program).found());
}

TEST(RepeatSkipping, ARunThatGoesOnWholeStepsEndsAsTheRunOfEveryOp) {
  std::uint64_t skipped = 0;
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const PreparedTrace p = prepared(stepsTrace(seed));
    const detail::ProgramPeriod period = detail::findProgramPeriod(p.program);
    ASSERT_TRUE(period.found()) << seed;
    RunSettings s;
    s.config = p.recorded_config;
    s.figures_at_edits = false;
    for (const char* point : {"before:model.py:phase_0", "after:model.py:phase_3", "before:model.py:phase_5",
                              "after:model.py:phase_7", "before:train.py:train_step"}) {
      const std::string what = "seed " + std::to_string(seed) + ", " + point;
      skipped += expectSameRuns(p, period, cleanupAt(p, point), s, what);
    }
    // Other settings, and the driver model's addresses from the start.
    RunSettings rounded = s;
    rounded.config = *sim::parseAllocConf("roundup_power2_divisions:4,max_split_size_mb:256");
    skipped += expectSameRuns(p, period, cleanupAt(p, "after:model.py:phase_2"), rounded, "rounded");
    RunSettings driver = s;
    driver.address_model = AddressModel::kDriver;
    skipped += expectSameRuns(p, period, cleanupAt(p, "before:model.py:phase_4"), driver, "driver");
  }
  EXPECT_GT(skipped, 0u) << "no run went on whole steps: nothing was compared";
}

// A device too small for some steps: a run that runs out of memory goes on op by op from there.
TEST(RepeatSkipping, ARunOutOfMemoryEndsAsTheRunOfEveryOp) {
  const PreparedTrace p = prepared(stepsTrace(2));
  const detail::ProgramPeriod period = detail::findProgramPeriod(p.program);
  RunSettings s;
  s.config = p.recorded_config;
  s.figures_at_edits = false;
  s.usable = static_cast<sim::ByteCount>(replayProgram(p, {}, s).peak_reserved.bytes) * 3 / 4;
  expectSameRuns(p, period, cleanupAt(p, "after:model.py:phase_6"), s, "small device");
}

std::string withoutSeconds(nlohmann::json j) {
  j.erase("seconds");
  return j.dump();
}

TEST(Sweep, GoingOnWholeStepsChangesNoAnswer) {
  std::uint64_t skipped = 0;
  for (std::uint64_t seed : {1u, 3u}) {
    const PreparedTrace p = prepared(stepsTrace(seed));
    SweepOptions o;
    o.objective = *parseSweepObjective("peak");
    o.jobs = 2;
    auto on = runSweep(p, o);
    o.skip_repeats = false;
    auto off = runSweep(p, o);
    ASSERT_TRUE(on.ok() && off.ok());
    EXPECT_EQ(off->steps_skipped, 0u);
    skipped += on->steps_skipped;
    ASSERT_GT(on->candidates.size(), 10u);
    EXPECT_EQ(withoutSeconds(sweepJson(*on, "t", on->candidates.size())),
              withoutSeconds(sweepJson(*off, "t", off->candidates.size())))
        << seed;
  }
  EXPECT_GT(skipped, 0u) << "no replay went on whole steps: nothing was compared";
}

}  // namespace
}  // namespace reservoir::replay
