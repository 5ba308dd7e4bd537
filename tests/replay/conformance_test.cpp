// `reservoir check` must be exact on every real trace: every event (action, address, size,
// stream), the final block layout, and the capture's memory_stats().
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/running_peak.h"
#include "reservoir/replay/conformance.h"
#include "reservoir/replay/point.h"
#include "reservoir/replay/summary.h"
#include "reservoir/traces/reader.h"
#include "trace_cases.h"

namespace reservoir::replay {
namespace {

using test::TraceCase;

void expectExact(const TraceCase& c) {
  auto snap = traces::readSnapshotFile(c.path.string());
  ASSERT_TRUE(snap.ok()) << snap.message();
  const auto capture = findCaptureFacts(c.path.string());
  ConformanceOptions opts;
  if (capture) opts.env.capture = std::make_shared<const CaptureFacts>(*capture);
  opts.expensive_checks = true;
  const std::size_t dev = snap->busiestDevice();
  for (const auto& text : c.reset_peaks) {
    auto point = parsePoint(text);
    ASSERT_TRUE(point.ok());
    auto gaps = resolvePoint(*point, *snap, dev);
    ASSERT_TRUE(gaps.ok()) << gaps.message();
    for (const auto& g : *gaps) opts.reset_peaks_at.push_back(g.boundary);
  }
  auto report = runConformance(*snap, dev, opts);
  ASSERT_TRUE(report.ok()) << report.message();
  if (report->first_divergence) {
    const auto& d = *report->first_divergence;
    FAIL() << c.name << ": diverged at event " << d.event_index << "\n expected  " << d.expected << "\n simulated "
           << d.simulated << "\n request   " << d.request;
  }
  // 'snapshot' markers (torch records one per _snapshot() call while recording: the program's own
  // dumps, the capture kit's reset marks) change no state and are not compared.
  const auto& events = snap->devices[dev].events;
  const auto markers = static_cast<std::size_t>(std::count_if(
      events.begin(), events.end(), [](const traces::TraceEvent& e) { return e.action == traces::Action::kSnapshot; }));
  EXPECT_EQ(report->events_compared + markers, report->events_total);
  EXPECT_TRUE(report->layout_mismatches.empty())
      << c.name << ": " << report->layout_mismatches.front().what << " expected "
      << report->layout_mismatches.front().expected << " simulated " << report->layout_mismatches.front().simulated;
  for (const auto& m : report->stats_mismatches)
    ADD_FAILURE() << c.name << ": " << m.what << " expected " << m.expected << " simulated " << m.simulated;
  EXPECT_EQ(report->invariant_failure, "");
  if (capture && !capture->memory_stats.empty()) {
    EXPECT_GE(report->stats_compared.size(), 20u) << c.name;
  }
}

class SharedTraces : public ::testing::TestWithParam<TraceCase> {};
TEST_P(SharedTraces, CheckIsExact) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  expectExact(GetParam());
}
INSTANTIATE_TEST_SUITE_P(Conformance, SharedTraces, ::testing::ValuesIn(test::collectTraces(test::sharedTracesDir())),
                         [](const ::testing::TestParamInfo<test::TraceCase>& p) {
                           return test::testName(p.param.name);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SharedTraces);

class OwnTraces : public ::testing::TestWithParam<TraceCase> {};
TEST_P(OwnTraces, CheckIsExact) { expectExact(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Samples, OwnTraces, ::testing::ValuesIn(test::collectTraces(test::samplesDir())),
                         [](const ::testing::TestParamInfo<test::TraceCase>& p) {
                           return test::testName(p.param.name);
                         });
INSTANTIATE_TEST_SUITE_P(Regression, OwnTraces,
                         ::testing::ValuesIn(test::collectTraces(test::testDataDir() / "traces")),
                         [](const ::testing::TestParamInfo<test::TraceCase>& p) {
                           return test::testName(p.param.name);
                         });

// `info --peak-allocated` keeps the largest allocated figure as the replay goes: it is the
// per-event timeline's largest value at the first event that holds it, as read from a timeline
// (on a ring-buffer trace, truncated-default-s22, of the replay whose start state was fitted).
void expectFirstLargestAllocated(const TraceCase& c) {
  auto snap = traces::readSnapshotFile(c.path.string());
  ASSERT_TRUE(snap.ok()) << snap.message();
  const std::size_t dev = snap->busiestDevice();
  ConformanceOptions opts;
  opts.keep_timeline = true;
  opts.find_missing_fraction = false;
  auto report = runConformance(*snap, dev, opts);
  ASSERT_TRUE(report.ok()) << report.message();
  ASSERT_FALSE(report->timeline.empty());
  std::size_t first_largest = 0;
  for (std::size_t i = 1; i < report->timeline.size(); ++i)
    if (report->timeline[i].allocated > report->timeline[first_largest].allocated) first_largest = i;

  const DeviceSummary s =
      summarizeDevice(*snap, dev, ReplayEnvironment{}, SummaryOptions{.model_allocated_peak = true});
  ASSERT_TRUE(s.peak_allocated.known) << s.peak_allocated_note;
  EXPECT_EQ(s.peak_allocated.bytes, report->timeline[first_largest].allocated);
  EXPECT_EQ(s.peak_allocated.event_index, first_largest);
  EXPECT_EQ(s.peak_allocated.time_us, snap->devices[dev].timeOf(first_largest));
  EXPECT_EQ(s.peak_allocated.stack, snap->devices[dev].events[first_largest].stack);
}

TEST_P(OwnTraces, TheSummarysAllocatedPeakIsTheTimelinesFirstLargest) { expectFirstLargestAllocated(GetParam()); }
TEST_P(SharedTraces, TheSummarysAllocatedPeakIsTheTimelinesFirstLargest) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  expectFirstLargestAllocated(GetParam());
}

// A replay that refits its start state reports from event 0 again: the peak is that attempt's,
// not a larger figure the attempt before it reached. Among requests of equal figures the first
// counts, at its first event.
TEST(RunningAllocatedPeak, ARefittedReplayStartsAgainAndTheFirstLargestCounts) {
  traces::DeviceTrace trace;
  for (std::int64_t t = 0; t < 6; ++t) trace.push(traces::TraceEvent{}, 100 + t);
  detail::RunningAllocatedPeak peak(trace);
  peak.request(0, 2, 10);
  peak.request(2, 4, 50);  // an attempt that diverges after this
  EXPECT_EQ(peak.peak().bytes, 50);
  peak.request(0, 1, 10);  // the refitted replay
  peak.request(1, 3, 30);
  peak.request(3, 4, 0);  // a marker with nothing allocated
  peak.request(4, 6, 30);
  ASSERT_TRUE(peak.peak().known);
  EXPECT_EQ(peak.peak().bytes, 30);
  EXPECT_EQ(peak.peak().event_index, 1u);
  EXPECT_EQ(peak.peak().time_us, 101);
}

TEST(Conformance, ReportsTheFirstDivergenceWithContext) {
  // Replaying under other settings than recorded must diverge, and say where and why.
  auto snap = traces::readSnapshotFile((test::samplesDir() / "resume-tiny/resume-main.rank0.pickle").string());
  ASSERT_TRUE(snap.ok());
  ConformanceOptions opts;
  opts.env.settings = "expandable_segments:True";
  auto report = runConformance(*snap, 0, opts);
  ASSERT_TRUE(report.ok());
  ASSERT_TRUE(report->first_divergence.has_value());
  EXPECT_EQ(report->first_divergence->event_index, 0u);
  EXPECT_NE(report->first_divergence->expected.find("segment_alloc"), std::string::npos);
  EXPECT_NE(report->first_divergence->simulated, report->first_divergence->expected);
  EXPECT_FALSE(report->first_divergence->request.empty());
  EXPECT_FALSE(report->exact());
}

TEST(Conformance, TimelineFollowsTheRecordedReservedBytes) {
  auto snap = traces::readSnapshotFile((test::samplesDir() / "resume-tiny/resume-main.rank0.pickle").string());
  ASSERT_TRUE(snap.ok());
  ConformanceOptions opts;
  opts.keep_timeline = true;
  auto report = runConformance(*snap, 0, opts);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->timeline.size(), snap->devices[0].events.size());
  std::int64_t reserved = 0;  // recomputed from the recorded segment events
  for (std::size_t i = 0; i < snap->devices[0].events.size(); ++i) {
    const auto& e = snap->devices[0].events[i];
    if (e.action == traces::Action::kSegmentAlloc) reserved += static_cast<std::int64_t>(e.size);
    if (e.action == traces::Action::kSegmentFree) reserved -= static_cast<std::int64_t>(e.size);
    // After each allocation the model holds exactly what the recording reserved then.
    if (e.action == traces::Action::kAlloc) {
      EXPECT_EQ(report->timeline[i].reserved, reserved) << i;
    }
  }
}


// A run made under a memory fraction, checked without its sidecar (the snapshot does not record
// the fraction): the divergence is named as one a fraction explains, and the search finds the
// fraction the capture JSON records (0.05), which makes the replay exact.
ConformanceOptions withoutSidecar() {
  ConformanceOptions o;  // no capture facts, no fraction
  return o;
}

TEST(Conformance, AMissingFractionIsNamedWithTheOneThatMakesItExact) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  const auto path = (test::sharedTracesDir() / "synth" / "gcthresh-s5.pickle").string();
  auto snap = traces::readSnapshotFile(path);
  ASSERT_TRUE(snap.ok()) << snap.message();
  const std::size_t dev = snap->busiestDevice();
  auto bare = runConformance(*snap, dev, withoutSidecar());
  ASSERT_TRUE(bare.ok()) << bare.message();
  EXPECT_FALSE(bare->exact());
  ASSERT_TRUE(bare->missing_fraction.has_value());
  ASSERT_TRUE(bare->missing_fraction->fraction.has_value()) << bare->missing_fraction->why;
  const auto capture = findCaptureFacts(path);
  ASSERT_TRUE(capture && capture->fraction);
  EXPECT_EQ(*bare->missing_fraction->fraction, *capture->fraction);  // the recorded one, found
  EXPECT_GE(bare->missing_fraction->tried, 1u);
  EXPECT_NE(bare->missing_fraction->why.find("release cached memory"), std::string::npos)
      << bare->missing_fraction->why;
  const bool worded = std::any_of(bare->notes.begin(), bare->notes.end(), [](const std::string& n) {
    return n.find("set_per_process_memory_fraction") != std::string::npos &&
           n.find("0.05") != std::string::npos && n.find("makes the replay exact") != std::string::npos;
  });
  EXPECT_TRUE(worded);

  ConformanceOptions given = withoutSidecar();  // the fraction it names: exact, nothing to name
  given.env.fraction = *bare->missing_fraction->fraction;
  auto exact = runConformance(*snap, dev, given);
  ASSERT_TRUE(exact.ok()) << exact.message();
  EXPECT_TRUE(exact->exact());
  EXPECT_FALSE(exact->missing_fraction.has_value());

  ConformanceOptions off = withoutSidecar();  // the search is the caller's to ask for
  off.find_missing_fraction = false;
  auto quiet = runConformance(*snap, dev, off);
  ASSERT_TRUE(quiet.ok());
  EXPECT_FALSE(quiet->missing_fraction.has_value());
}

// Where nothing a fraction explains happened, or the fraction is known, no hint: a fraction run
// that is exact without its sidecar (its ooms tell the capacity), and a divergence of another kind.
TEST(Conformance, NoFractionHintWhereNoFractionExplainsIt) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  auto snap = traces::readSnapshotFile((test::sharedTracesDir() / "synth" / "fraction-s6.pickle").string());
  ASSERT_TRUE(snap.ok()) << snap.message();
  auto r = runConformance(*snap, snap->busiestDevice(), withoutSidecar());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_TRUE(r->exact());
  EXPECT_FALSE(r->missing_fraction.has_value());

  auto gc = traces::readSnapshotFile((test::sharedTracesDir() / "synth" / "gcthresh-s5.pickle").string());
  ASSERT_TRUE(gc.ok());
  ConformanceOptions known = withoutSidecar();
  known.env.fraction = 0.5;  // given (wrongly): the fraction is known, so it is not searched for
  auto wrong = runConformance(*gc, gc->busiestDevice(), known);
  ASSERT_TRUE(wrong.ok());
  EXPECT_FALSE(wrong->exact());
  EXPECT_FALSE(wrong->missing_fraction.has_value());
}

}  // namespace
}  // namespace reservoir::replay
