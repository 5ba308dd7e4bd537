// The motivating case: from resume-main's trace alone, predict each cleanup placement's
// figures as measured on the GPU (../shared/traces/README.md), to the byte.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>

#include "reservoir/replay/report_text.h"
#include "reservoir/replay/trace.h"
#include "reservoir/replay/whatif.h"
#include "reservoir/traces/reader.h"
#include "trace_cases.h"

namespace reservoir::replay {
namespace {

constexpr const char* kAfterLoad = "after:state_dict_loader.py:load";

struct Measured {
  std::int64_t reserved_after_load, step2_peak_allocated, step2_peak_reserved;
};

Measured readMeasured(const std::filesystem::path& json_path) {
  std::ifstream in(json_path);
  const auto j = nlohmann::json::parse(in);
  return Measured{j["after_load"]["reserved"].get<std::int64_t>(), j["step2"]["peak_allocated"].get<std::int64_t>(),
                  j["step2"]["peak_reserved"].get<std::int64_t>()};
}

WhatIfReport predict(const std::filesystem::path& main_trace, const std::string& cleanup) {
  auto snap = readTrace(main_trace.string());
  EXPECT_TRUE(snap.ok()) << snap.message();
  WhatIfOptions opts;
  opts.edits.push_back(*parseCleanup(cleanup));
  opts.edits.push_back(*parseProbe(kAfterLoad));
  auto rep = runWhatIf(snap->snapshot, snap->snap().busiestDevice(), ReplayEnvironment{}, opts);
  EXPECT_TRUE(rep.ok()) << rep.message();
  return *rep;
}

void expectPrediction(const std::filesystem::path& dir, int rank, const std::string& variant,
                      const std::string& cleanup) {
  const auto main_trace = dir / ("resume-main.rank" + std::to_string(rank) + ".pickle");
  const auto measured = readMeasured(dir / ("resume-" + variant + ".rank" + std::to_string(rank) + ".json"));
  const auto main_measured = readMeasured(dir / ("resume-main.rank" + std::to_string(rank) + ".json"));
  const WhatIfReport rep = predict(main_trace, cleanup);
  ASSERT_EQ(rep.whatif.probes.size(), 1u);
  EXPECT_EQ(rep.whatif.probes[0].reserved, measured.reserved_after_load) << variant << " rank " << rank;
  EXPECT_EQ(rep.whatif.peak_allocated.bytes, measured.step2_peak_allocated) << variant << " rank " << rank;
  EXPECT_EQ(rep.whatif.peak_reserved.bytes, measured.step2_peak_reserved) << variant << " rank " << rank;
  // ... and the baseline is resume-main as measured.
  ASSERT_EQ(rep.baseline.probes.size(), 1u);
  EXPECT_EQ(rep.baseline.probes[0].reserved, main_measured.reserved_after_load);
  EXPECT_EQ(rep.baseline.peak_reserved.bytes, main_measured.step2_peak_reserved);
  EXPECT_TRUE(rep.baseline_matches_recording);
}

TEST(MotivatingCase, SharedTracesBothRanksBothSets) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  for (const char* set : {"resume-tiny", "resume-expandable"}) {
    const auto dir = test::sharedTracesDir() / set;
    for (int rank : {0, 1}) {
      expectPrediction(dir, rank, "postload", "after:state_dict_loader.py:load");
      if (std::filesystem::exists(dir / ("resume-prebroadcast.rank" + std::to_string(rank) + ".json")))
        expectPrediction(dir, rank, "prebroadcast", "before:broadcast_weights");
    }
  }
}

TEST(MotivatingCase, BundledSamples) {
  expectPrediction(test::samplesDir() / "resume-tiny", 0, "postload", "after:state_dict_loader.py:load");
  expectPrediction(test::samplesDir() / "resume-expandable", 0, "postload", "after:state_dict_loader.py:load");
  expectPrediction(test::samplesDir() / "resume-expandable", 0, "prebroadcast", "before:broadcast_weights");
}

// A cleanup reports reserved at its own point with no probe: just after it in the edited run, and
// at the same point in the baseline (which frees nothing there), as measured on the GPU.
TEST(WhatIfEditFigures, ACleanupMeasuresItsOwnPointWithoutAProbe) {
  for (const char* set : {"resume-tiny", "resume-expandable"}) {
    const auto dir = test::samplesDir() / set;
    const auto measured = readMeasured(dir / "resume-postload.rank0.json");
    const auto main_measured = readMeasured(dir / "resume-main.rank0.json");
    auto snap = readTrace((dir / "resume-main.rank0.pickle").string());
    ASSERT_TRUE(snap.ok()) << snap.message();
    WhatIfOptions opts;
    opts.edits.push_back(*parseCleanup(kAfterLoad));
    auto rep = runWhatIf(snap->snapshot, snap->snap().busiestDevice(), ReplayEnvironment{}, opts);
    ASSERT_TRUE(rep.ok()) << rep.message();
    EXPECT_TRUE(rep->whatif.probes.empty());
    ASSERT_FALSE(rep->whatif.at_edits.empty()) << set;
    ASSERT_EQ(rep->baseline.at_edits.size(), rep->whatif.at_edits.size()) << set;
    EXPECT_EQ(rep->whatif.at_edits[0].point, kAfterLoad);
    EXPECT_EQ(rep->whatif.at_edits[0].reserved, measured.reserved_after_load) << set;
    EXPECT_EQ(rep->baseline.at_edits[0].reserved, main_measured.reserved_after_load) << set;
    // Observing frees nothing: the baseline is the recording, with the recorded empty_cache calls only.
    EXPECT_TRUE(rep->baseline_matches_recording) << set;
    EXPECT_EQ(rep->whatif.empty_cache_calls, rep->baseline.empty_cache_calls + rep->whatif.at_edits.size());
    const std::string verdict = whatIfVerdict(*rep);
    EXPECT_TRUE(verdict.starts_with("empty_cache after state_dict_loader.py:load: reserved there ")) << verdict;
    EXPECT_NE(verdict.find(" -> "), std::string::npos) << verdict;
    const auto* first = firstEditFigure(rep->whatif, rep->edits[0]);
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(first, &rep->whatif.at_edits[0]);
  }
}

// A probe at the cleanup's point says it already: the verdict names the point once.
TEST(WhatIfEditFigures, AProbeAtTheCleanupsPointIsNotRepeated) {
  const WhatIfReport rep = predict(test::samplesDir() / "resume-tiny/resume-main.rank0.pickle", kAfterLoad);
  ASSERT_EQ(rep.whatif.probes.size(), 1u);
  ASSERT_FALSE(rep.whatif.at_edits.empty());
  EXPECT_EQ(rep.whatif.at_edits[0].reserved, rep.whatif.probes[0].reserved);
  const std::string verdict = whatIfVerdict(rep);
  const auto first = verdict.find("reserved there");
  ASSERT_NE(first, std::string::npos) << verdict;
  EXPECT_EQ(verdict.find("reserved there", first + 1), std::string::npos) << verdict;
}

// A run that keeps no figures at its edits (a sweep's) is the same run: only at_edits is empty.
TEST(WhatIfEditFigures, ARunWithoutFiguresIsTheSameRun) {
  auto trace = readTrace((test::samplesDir() / "resume-tiny/resume-main.rank0.pickle").string());
  ASSERT_TRUE(trace.ok()) << trace.message();
  auto prepared = prepareTrace(trace->snapshot, trace->snap().busiestDevice(), ReplayEnvironment{});
  ASSERT_TRUE(prepared.ok()) << prepared.message();
  auto edits = resolveEdits(*prepared, {*parseCleanup(kAfterLoad), *parseCleanup("event:40"), *parseProbe("event:60")});
  ASSERT_TRUE(edits.ok()) << edits.message();
  RunSettings s;
  s.config = prepared->recorded_config;
  const RunResult with = replayProgram(*prepared, *edits, s);
  s.figures_at_edits = false;
  const RunResult without = replayProgram(*prepared, *edits, s);
  ASSERT_GE(with.at_edits.size(), 2u);
  EXPECT_TRUE(without.at_edits.empty());
  EXPECT_EQ(with.peak_reserved.bytes, without.peak_reserved.bytes);
  EXPECT_EQ(with.peak_reserved.op, without.peak_reserved.op);
  EXPECT_EQ(with.peak_allocated.bytes, without.peak_allocated.bytes);
  EXPECT_EQ(with.final_reserved, without.final_reserved);
  EXPECT_EQ(with.empty_cache_calls, without.empty_cache_calls);
  EXPECT_EQ(with.driver.cuda_mallocs, without.driver.cuda_mallocs);
  EXPECT_EQ(with.driver.cuda_frees, without.driver.cuda_frees);
  EXPECT_EQ(with.mean_reserved, without.mean_reserved);
  ASSERT_EQ(with.probes.size(), 1u);
  ASSERT_EQ(without.probes.size(), 1u);
  EXPECT_EQ(with.probes[0].reserved, without.probes[0].reserved);
}

TEST(MotivatingCase, SameGapRunsAfterItemsBeforeBeforeItems) {
  // In the pre-broadcast variant the probe after the load must not see the cleanup placed
  // before the broadcast, although both fall into the same gap.
  const WhatIfReport rep =
      predict(test::samplesDir() / "resume-tiny/resume-main.rank0.pickle", "before:broadcast_weights");
  EXPECT_EQ(rep.whatif.probes[0].reserved, rep.baseline.probes[0].reserved);
  EXPECT_EQ(rep.whatif.empty_cache_calls, rep.baseline.empty_cache_calls + 1);
}

// With no edits, the what-if replay reproduces the recorded peak reserved and makes every
// decision the recording made, at the recorded addresses: under the default address model
// (anchored: the run never departs from the recording's segments) and the recorded one.
void expectBaselineReproduces(const test::TraceCase& c) {
  auto snap = readTrace(c.path.string());
  ASSERT_TRUE(snap.ok()) << snap.message();
  ReplayEnvironment env;
  const auto capture = findCaptureFacts(c.path.string());
  if (capture) env.capture = std::make_shared<const CaptureFacts>(*capture);
  ASSERT_EQ(WhatIfOptions{}.address_model, AddressModel::kAnchored);  // the default
  for (const AddressModel model : {AddressModel::kAnchored, AddressModel::kRecorded}) {
    SCOPED_TRACE(addressModelName(model));
    WhatIfOptions opts;
    opts.analyze_peak = false;
    opts.address_model = model;
    auto rep = runWhatIf(snap->snapshot, snap->snap().busiestDevice(), env, opts);
    ASSERT_TRUE(rep.ok()) << rep.message();
    EXPECT_EQ(rep->baseline.peak_reserved.bytes, rep->recorded_peak_reserved) << c.name;
    EXPECT_FALSE(rep->baseline.decision_change.has_value())
        << c.name << " at " << rep->baseline.decision_change.value_or(0);
    EXPECT_EQ(rep->baseline.address_drift, 0u) << c.name;
    EXPECT_EQ(rep->whatif.peak_reserved.bytes, rep->baseline.peak_reserved.bytes);
  }
}

// Where the driver model's placement changes decisions of a no-edit replay (docs/whatif.md's
// table: synth/roundup-s4 from event 767), the anchored model does not: the run never departs.
TEST(WhatIf, AnchoredKeepsTheRecordingWhereTheDriverModelDoesNot) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  const auto path = test::sharedTracesDir() / "synth" / "roundup-s4.pickle";
  auto snap = readTrace(path.string());
  ASSERT_TRUE(snap.ok()) << snap.message();
  auto run = [&](AddressModel model) {
    WhatIfOptions opts;
    opts.analyze_peak = false;
    opts.address_model = model;
    auto rep = runWhatIf(snap->snapshot, 0, snap->environment(), opts);
    EXPECT_TRUE(rep.ok()) << rep.message();
    return std::move(*rep);
  };
  const auto driver = run(AddressModel::kDriver), anchored = run(AddressModel::kAnchored);
  EXPECT_TRUE(driver.baseline.decision_change.has_value());
  EXPECT_FALSE(anchored.baseline.decision_change.has_value());
  EXPECT_EQ(anchored.baseline.address_drift, 0u);
  EXPECT_EQ(anchored.baseline.peak_reserved.bytes, anchored.recorded_peak_reserved);
}

class NoEditReplay : public ::testing::TestWithParam<test::TraceCase> {};
TEST_P(NoEditReplay, ReproducesTheRecording) {
  if (GetParam().path.string().find("/shared/") != std::string::npos) RESERVOIR_REQUIRE_SHARED_TRACES();
  expectBaselineReproduces(GetParam());
}
INSTANTIATE_TEST_SUITE_P(Shared, NoEditReplay, ::testing::ValuesIn(test::collectTraces(test::sharedTracesDir())),
                         [](const ::testing::TestParamInfo<test::TraceCase>& p) {
                           return test::testName(p.param.name);
                         });
INSTANTIATE_TEST_SUITE_P(Own, NoEditReplay, ::testing::ValuesIn(test::collectTraces(test::testDataDir() / "traces")),
                         [](const ::testing::TestParamInfo<test::TraceCase>& p) {
                           return test::testName(p.param.name);
                         });

TEST(WhatIf, CapacityPredictsOutOfMemoryAndDemand) {
  auto snap = readTrace((test::samplesDir() / "resume-tiny/resume-main.rank0.pickle").string());
  ASSERT_TRUE(snap.ok());
  WhatIfOptions opts;
  opts.capacity = 400ull << 20;  // below the 510 MiB peak
  opts.edits.push_back(*parseDemand("100MiB@after:state_dict_loader.py:load"));
  auto rep = runWhatIf(snap->snapshot, 0, ReplayEnvironment{}, opts);
  ASSERT_TRUE(rep.ok()) << rep.message();
  ASSERT_TRUE(rep->baseline.oom.has_value());
  EXPECT_GT(rep->baseline.oom->count, 0u);
  ASSERT_EQ(rep->baseline.demands.size(), 1u);
  EXPECT_TRUE(rep->baseline.demands[0].capacity_known);
  // 400 MiB - 162 MiB reserved after the load = 238 MiB free: 100 MiB fits.
  EXPECT_EQ(rep->baseline.demands[0].free, static_cast<std::int64_t>((400ull << 20) - 169869312ull));
  EXPECT_TRUE(rep->baseline.demands[0].fits);
}

TEST(WhatIf, ReleaseFreesMatchingTensorsAtThePoint) {
  auto snap = readTrace((test::samplesDir() / "resume-tiny/resume-main.rank0.pickle").string());
  ASSERT_TRUE(snap.ok());
  WhatIfOptions opts;
  // The optimizer state created by _init_optim_state during the load, released right after it.
  opts.edits.push_back(*parseRelease("_init_optim_state@after:state_dict_loader.py:load"));
  opts.edits.push_back(*parseProbe(kAfterLoad));
  auto rep = runWhatIf(snap->snapshot, 0, ReplayEnvironment{}, opts);
  ASSERT_TRUE(rep.ok()) << rep.message();
  EXPECT_LT(rep->whatif.probes[0].allocated, rep->baseline.probes[0].allocated);
}

TEST(WhatIf, SettingsChangeTheReplay) {
  auto snap = readTrace((test::samplesDir() / "resume-tiny/resume-main.rank0.pickle").string());
  ASSERT_TRUE(snap.ok());
  WhatIfOptions opts;
  opts.settings = *sim::parseAllocConf("expandable_segments:True");
  auto rep = runWhatIf(snap->snapshot, 0, ReplayEnvironment{}, opts);
  ASSERT_TRUE(rep.ok()) << rep.message();
  EXPECT_NE(rep->whatif.peak_reserved.bytes, rep->baseline.peak_reserved.bytes);
  EXPECT_EQ(rep->whatif.peak_allocated.bytes % 512, 0);
}

TEST(WhatIf, EditsParseFromKindAndTextWithoutNamingFlags) {
  auto c = parseEdit("  cleanup   after:x.py:load ");
  ASSERT_TRUE(c) << c.message();
  EXPECT_EQ(c->kind, Edit::Kind::kCleanup);
  EXPECT_EQ(c->text, "after:x.py:load");
  auto d = parseEdit("demand 4GiB@event:10");
  ASSERT_TRUE(d) << d.message();
  EXPECT_EQ(d->kind, Edit::Kind::kDemand);
  EXPECT_EQ(d->bytes, 4ull << 30);
  auto r = parseEdit(Edit::Kind::kRelease, "x.py:f@after:y.py:g");
  ASSERT_TRUE(r) << r.message();
  EXPECT_TRUE(r->selector.has_value());
  for (const char* bad : {"explode now", "demand lots@event:1", "release nowhere", "demand 4GiB", ""}) {
    auto e = parseEdit(bad);
    ASSERT_FALSE(e) << bad;
    EXPECT_EQ(e.message().find("--"), std::string::npos) << e.message();
  }
  for (Edit::Kind k :
       {Edit::Kind::kCleanup, Edit::Kind::kRelease, Edit::Kind::kProbe, Edit::Kind::kDemand, Edit::Kind::kResetPeaks})
    EXPECT_EQ(editKindFromName(editKindName(k)), k);
}

}  // namespace
}  // namespace reservoir::replay
