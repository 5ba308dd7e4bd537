// TraceSession (replay/session.h): the staged loading the GUI builds on.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <limits>
#include <mutex>

#include "reservoir/replay/session.h"
#include "reservoir/traces/reader.h"
#include "reservoir/traces/recorded_reserved.h"
#include "test_paths.h"

namespace reservoir::replay {
namespace {

// The events' times made nondecreasing, written out: what EventTimes answers per event.
std::vector<std::int64_t> raisedTimes(const traces::DeviceTrace& trace) {
  std::vector<std::int64_t> t(trace.events.size());
  for (std::size_t e = 0; e < t.size(); ++e) t[e] = e == 0 ? trace.timeOf(e) : std::max(t[e - 1], trace.timeOf(e));
  return t;
}

std::string tinyTrace() { return (test::samplesDir() / "resume-tiny" / "resume-main.rank0.pickle").string(); }

TEST(Session, FirstStageSeriesAgreeWithTheLifetimes) {
  auto loaded = loadTraceFile(tinyTrace(), std::nullopt, nullptr, {});
  ASSERT_TRUE(loaded) << loaded.message();
  const LoadStage& t = **loaded;
  const auto& s = t.series;
  ASSERT_EQ(s.size(), t.deviceTrace().events.size());
  // live[e] is the sum of the allocations alive after e, as the bands count them.
  for (std::size_t e = 0; e < s.size(); e += std::max<std::size_t>(1, s.size() / 50)) {
    std::int64_t live = 0;
    for (std::size_t a = 0; a < t.lifetimes.count(); ++a)
      if (t.lifetimes.begin(a) <= e && e < t.lifetimes.end(a)) live += static_cast<std::int64_t>(t.lifetimes.size(a));
    EXPECT_EQ(live, s.live[e]) << "event " << e;
  }
  // reserved[e]: the start state plus the segment events up to e (kept as its changes only).
  ASSERT_EQ(s.reserved.size(), s.size());
  std::int64_t reserved = t.facts.start_reserved, peak = reserved;
  for (std::size_t e = 0; e < s.size(); ++e) {
    reserved += traces::reservedChange(t.deviceTrace().events[e]);
    peak = e == 0 ? reserved : std::max(peak, reserved);
    ASSERT_EQ(s.reserved[e], reserved) << "event " << e;
  }
  EXPECT_LT(s.reserved.changeEvents().size(), s.size() / 4);  // the point of keeping changes only
  EXPECT_EQ(s.peak_reserved, peak);
  const auto times = raisedTimes(t.deviceTrace());
  ASSERT_EQ(s.time_us.size(), times.size());
  for (std::size_t e = 0; e < times.size(); ++e) ASSERT_EQ(s.time_us[e], times[e]) << "event " << e;
  EXPECT_GT(t.facts.events, 0u);
}

// A step series keeps only its changes and answers per event, searched or walked with a hint
// (forwards, backwards, and in jumps).
TEST(Session, AStepSeriesAnswersPerEventFromItsChanges) {
  StepSeries s;
  std::vector<std::int64_t> want;
  std::uint32_t state = 12345;
  std::int64_t v = 0;
  for (std::uint32_t e = 0; e < 5000; ++e) {
    state = state * 1103515245u + 12345u;
    if ((state >> 16) % 13 == 0) v = (state >> 8) % 7;  // repeats of the same value are no change
    s.push(e, v);
    want.push_back(v);
  }
  ASSERT_EQ(s.size(), want.size());
  EXPECT_LT(s.changeEvents().size(), want.size() / 5);
  for (std::size_t e = 0; e < want.size(); ++e) ASSERT_EQ(s[e], want[e]) << e;
  std::size_t hint = 0;
  for (std::size_t e = want.size(); e-- > 0;) ASSERT_EQ(s.at(e, hint), want[e]) << e;
  for (std::size_t e = 0; e < want.size(); e += 1 + e % 37) ASSERT_EQ(s.at(e, hint), want[e]) << e;
  for (std::size_t k = 0; k < 200; ++k) {
    const std::size_t e = (k * 7919) % want.size();
    ASSERT_EQ(s.at(e, hint), want[e]) << e;
  }
  EXPECT_EQ(s.back(), want.back());
}

// A recording whose clock went back: the events before the next forward step take the time
// before them, kept as runs, and the searches answer as over the times written out.
TEST(Session, EventTimesRaiseWhatTheClockTookBack) {
  traces::DeviceTrace trace;
  traces::TraceEvent alloc;
  alloc.action = traces::Action::kAlloc;
  for (std::int64_t t : {5, 7, 3, 4, 7, 9, 2, 10, 10, 1}) trace.push(alloc, t);
  const EventTimes times(trace);
  const std::vector<std::int64_t> want = {5, 7, 7, 7, 7, 9, 9, 10, 10, 10};
  ASSERT_EQ(times.size(), want.size());
  for (std::size_t e = 0; e < want.size(); ++e) EXPECT_EQ(times[e], want[e]) << "event " << e;
  EXPECT_EQ(want, raisedTimes(trace));  // the written-out reference agrees
  EXPECT_EQ(times.raisedRuns(), 3u);  // events 2-3, 6, 9 (event 4 is at the time itself)
  for (std::int64_t t = 0; t <= 12; ++t) {
    EXPECT_EQ(times.lowerBound(t), static_cast<std::size_t>(std::lower_bound(want.begin(), want.end(), t) - want.begin()));
    EXPECT_EQ(times.upperBound(t), static_cast<std::size_t>(std::upper_bound(want.begin(), want.end(), t) - want.begin()));
  }
  EXPECT_EQ(times.upperBound(std::numeric_limits<std::int64_t>::max()), want.size());
  EXPECT_EQ(times.lowerBound(std::numeric_limits<std::int64_t>::min()), 0u);
  EXPECT_EQ(EventTimes(traces::DeviceTrace{}).size(), 0u);
}

TEST(Session, ModelStagePeakMatchesTheRecording) {
  auto loaded = loadTraceFile(tinyTrace(), std::nullopt, nullptr, {});
  ASSERT_TRUE(loaded);
  auto model = buildModelStage(**loaded, 64, nullptr, {});
  ASSERT_TRUE(model) << model.message();
  const auto& m = **model;
  EXPECT_EQ(m.reserved.size(), m.prepared.program.ops.size());
  EXPECT_EQ(m.allocated.size(), m.prepared.program.ops.size());
  EXPECT_EQ(m.run.peak_reserved.bytes, (*loaded)->series.peak_reserved);
  EXPECT_EQ(m.index->result().peak_reserved.bytes, m.run.peak_reserved.bytes);
  // The state at the peak holds the peak's reserved bytes.
  const auto segs = m.stateAtEvent((*loaded)->series.peak_reserved_event);
  std::int64_t reserved = 0;
  for (const auto& s : segs) reserved += static_cast<std::int64_t>(s.total_size);
  EXPECT_EQ(reserved, (*loaded)->series.reserved[(*loaded)->series.peak_reserved_event]);
}

// The curves come from the state index's replay, taken in pieces between its checkpoints: they
// equal a plain run's timeline op for op, whatever the checkpoint spacing.
TEST(Session, ModelStageCurvesEqualAPlainRunsTimeline) {
  auto loaded = loadTraceFile(tinyTrace(), std::nullopt, nullptr, {});
  ASSERT_TRUE(loaded);
  for (std::uint32_t every : {1u, 7u, 64u, 1u << 20}) {
    auto model = buildModelStage(**loaded, every, nullptr, {});
    ASSERT_TRUE(model) << model.message();
    const auto& m = **model;
    RunSettings rs;
    rs.config = m.prepared.recorded_config;
    rs.fraction = m.prepared.fraction;
    rs.compare_with_recording = true;
    rs.keep_timeline = true;
    const RunResult plain = replayProgram(m.prepared, {}, rs);
    ASSERT_EQ(plain.timeline.size(), m.prepared.program.ops.size());
    ASSERT_EQ(m.allocated.size(), plain.timeline.size()) << "every " << every;
    ASSERT_EQ(m.reserved.size(), plain.timeline.size()) << "every " << every;
    for (std::size_t j = 0; j < plain.timeline.size(); ++j) {
      ASSERT_EQ(m.reserved[j], plain.timeline[j].reserved) << "op " << j << ", every " << every;
      ASSERT_EQ(m.allocated[j], plain.timeline[j].allocated) << "op " << j << ", every " << every;
      ASSERT_EQ(m.active[j], plain.timeline[j].active) << "op " << j << ", every " << every;
    }
    EXPECT_EQ(m.run.peak_reserved.bytes, plain.peak_reserved.bytes);
    EXPECT_EQ(m.run.peak_allocated.op, plain.peak_allocated.op);
    EXPECT_EQ(m.run.final_reserved, plain.final_reserved);
    EXPECT_TRUE(m.run.curves.allocated.empty());  // handed over, not kept twice
  }
}

// The model stage reads its allocations' stacks from the load stage's request stream (shared,
// not copied: 27 MB at 20 M events), and they are what a trace prepared alone names.
TEST(Session, ModelStageSharesTheLoadStagesStacks) {
  auto loaded = loadTraceFile(tinyTrace(), std::nullopt, nullptr, {});
  ASSERT_TRUE(loaded);
  const LoadStage& l = **loaded;
  const long before = l.lifetimes.sharedStream().use_count();
  auto model = buildModelStage(l, 64, nullptr, {});
  ASSERT_TRUE(model) << model.message();
  EXPECT_GT(l.lifetimes.sharedStream().use_count(), before) << "the model stage holds the stream";
  auto alone = prepareTrace(l.trace.snapshot, l.device_index, l.environment());
  ASSERT_TRUE(alone) << alone.message();
  const AllocationStacks& shared = (*model)->prepared.allocation_stacks;
  ASSERT_EQ(shared.size(), alone->allocation_stacks.size());
  ASSERT_GT(shared.size(), 0u);
  for (std::size_t a = 0; a < shared.size(); ++a) ASSERT_EQ(shared[a], alone->allocation_stacks[a]) << a;
  EXPECT_EQ(shared[shared.size()], StackId(0)) << "past the table: the empty stack";
  for (const Op& op : (*model)->prepared.program.ops) ASSERT_EQ((*model)->prepared.opStack(op), alone->opStack(op));
}

// A long program keeps at most kMaxModelCheckpoints checkpoints (at 20 M events 814 of them
// held 74 MB); a shorter one the spacing asked for.
TEST(Session, ALongProgramsCheckpointsAreCapped) {
  EXPECT_EQ(checkpointSpacing(1000, 64), 64u);
  EXPECT_EQ(checkpointSpacing(0, 0), 1u);
  EXPECT_EQ(checkpointSpacing(4'194'304, kDefaultCheckpointEvery), kDefaultCheckpointEvery);
  EXPECT_EQ(checkpointSpacing(13'327'984, kDefaultCheckpointEvery), 52'063u);  // synth 20 M's ops
  for (const std::size_t ops :
       {std::size_t{1}, std::size_t{4'194'305}, std::size_t{13'327'984}, std::size_t{1} << 32}) {
    const std::uint32_t every = checkpointSpacing(ops, kDefaultCheckpointEvery);
    EXPECT_GE(every, kDefaultCheckpointEvery) << ops;
    EXPECT_LE((ops + every - 1) / every, kMaxModelCheckpoints) << ops;
  }
}

TEST(Session, WhatIfOnThePreparedTraceEqualsRunWhatIf) {
  auto loaded = loadTraceFile(tinyTrace(), std::nullopt, nullptr, {});
  ASSERT_TRUE(loaded);
  auto model = buildModelStage(**loaded, 256, nullptr, {});
  ASSERT_TRUE(model);
  WhatIfOptions o;
  o.edits.push_back(*parseCleanup("after:state_dict_loader.py:load"));
  o.edits.push_back(*parseProbe("after:state_dict_loader.py:load"));
  auto fast = runWhatIfPrepared(**model, o);
  auto full = runWhatIf((*loaded)->trace.snapshot, (*loaded)->device_index, (*loaded)->environment(), o);
  ASSERT_TRUE(fast) << fast.message();
  ASSERT_TRUE(full) << full.message();
  EXPECT_EQ(fast->whatif.peak_reserved.bytes, full->whatif.peak_reserved.bytes);
  EXPECT_EQ(fast->baseline.peak_reserved.bytes, full->baseline.peak_reserved.bytes);
  EXPECT_EQ(fast->whatif.peak_allocated.bytes, full->whatif.peak_allocated.bytes);
  ASSERT_EQ(fast->whatif.probes.size(), full->whatif.probes.size());
  EXPECT_EQ(fast->whatif.probes[0].reserved, full->whatif.probes[0].reserved);
  EXPECT_EQ(fast->capacity_source, full->capacity_source);
  // The cleanup returns cached memory at the probe (the peak comes later and stays).
  EXPECT_LT(fast->whatif.probes[0].reserved, fast->baseline.probes[0].reserved);
}

TEST(Session, PublishesStagesInOrderOnItsThread) {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> seen;
  bool done = false;
  SessionCallbacks cb;
  cb.loaded = [&](std::shared_ptr<const LoadStage>) {
    std::lock_guard l(mu);
    seen.push_back("loaded");
  };
  cb.modelled = [&](std::shared_ptr<const ModelStage> m) {
    std::lock_guard l(mu);
    seen.push_back(m->prepared.snapshot == m->trace.snapshot ? "modelled" : "modelled-without-its-snapshot");
  };
  cb.progress = [&](SessionStage s, std::uint64_t, std::uint64_t) {
    if (s != SessionStage::kDone) return;
    std::lock_guard l(mu);
    done = true;
    cv.notify_all();
  };
  TraceSession session(tinyTrace(), cb);
  session.start();
  session.wait();
  std::lock_guard l(mu);
  EXPECT_TRUE(done);
  EXPECT_EQ(seen, (std::vector<std::string>{"loaded", "modelled"}));
}

TEST(Session, ABadFileFailsWithTheReadersMessage) {
  std::string message;
  SessionCallbacks cb;
  std::string headline;
  cb.failed = [&](const Status& why) {
    message = why.message();
    headline = why.headline();
  };
  TraceSession session((test::testDataDir() / "no-such-file.pickle").string(), cb);
  session.start();
  session.wait();
  EXPECT_EQ(message.rfind("cannot read the file: No such file or directory (file ", 0), 0u) << message;
  EXPECT_NE(message.find("no-such-file.pickle"), std::string::npos) << message;
  EXPECT_EQ(message.rfind(headline, 0), 0u) << "the message starts with its headline: " << headline;
  EXPECT_FALSE(headline.empty());
}

TEST(Session, CancelStopsTheRead) {
  std::string message;
  SessionCallbacks cb;
  cb.failed = [&](const Status& why) { message = why.message(); };
  cb.loaded = [](std::shared_ptr<const LoadStage>) {};
  {
    TraceSession session(tinyTrace(), cb);
    session.cancel();
    session.start();
    session.wait();
  }
  EXPECT_NE(message.find("cancel"), std::string::npos) << message;
}

}  // namespace
}  // namespace reservoir::replay
