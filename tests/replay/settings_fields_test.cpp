// Issue 13 through the replay: recorded settings from a newer torch never block, snapshots
// without history have nothing to replay, and an oom inside a MemPool stays in its pool.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <regex>

#include "cli.h"
#include "cli_runner.h"
#include "reservoir/replay/conformance.h"
#include "reservoir/replay/point.h"
#include "reservoir/replay/session.h"
#include "reservoir/replay/whatif.h"
#include "reservoir/traces/reader.h"
#include "reservoir/traces/request_stream.h"
#include "reservoir/traces/window_start.h"
#include "reservoir/traces/writer.h"
#include "test_paths.h"

namespace reservoir::replay {
namespace {

bool anyNoteHas(const std::vector<std::string>& notes, const std::string& text) {
  return std::any_of(notes.begin(), notes.end(),
                     [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

TEST(RecordedSettings, AnUnknownKeyIsReplayedAsAbsentWithOneWarning) {
  auto snap = traces::readSnapshotFile((test::samplesDir() / "worked-example.cpp-pickle2.pickle").string());
  ASSERT_TRUE(snap.ok()) << snap.message();
  const std::string recorded = snap->settings.alloc_conf;
  snap->settings.alloc_conf =
      "future_knob:7," + (recorded.empty() ? "" : recorded + ",") + "future_knob:[a:1],other_knob:True";
  ConformanceOptions opts;
  auto report = runConformance(*snap, 0, opts);
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_TRUE(report->exact());  // the worked example does not depend on the unknown keys
  const auto count = std::count_if(report->notes.begin(), report->notes.end(),
                                   [](const std::string& n) { return n.find("'future_knob'") != std::string::npos; });
  EXPECT_EQ(count, 1);  // named once
  EXPECT_TRUE(anyNoteHas(report->notes, "'other_knob'"));
  EXPECT_TRUE(anyNoteHas(report->notes, "may differ"));
  // Typed settings (--settings) still follow torch: an unknown key is an error.
  ReplayEnvironment env;
  env.settings = "future_knob:7";
  EXPECT_FALSE(replayConfig(*snap, env).ok());
}

TEST(RecordedSettings, StreamReserveClassesAreNamedAsNotReplayable) {
  auto cfg = sim::parseAllocConf("expandable_segments_reserve_by_class:[serving:0.25]");
  ASSERT_TRUE(cfg.ok());
  EXPECT_TRUE(anyNoteHas(settingsNotes(*cfg), "replayed as untagged"));
  EXPECT_TRUE(settingsNotes(sim::AllocatorConfig{}).empty());
}

TEST(NoHistory, TheLibrarySaysThereIsNothingToReplay) {
  for (const char* name : {"state-only.pickle", "no-traces.pickle"}) {
    auto snap = traces::readSnapshotFile((test::testDataDir() / "no-history" / name).string());
    ASSERT_TRUE(snap.ok()) << name << ": " << snap.message();
    auto why = nothingToReplay(*snap);
    ASSERT_TRUE(why.has_value()) << name;
    EXPECT_NE(why->find("nothing to replay"), std::string::npos);
    EXPECT_NE(why->find("1 segment"), std::string::npos);
  }
  auto full = traces::readSnapshotFile((test::samplesDir() / "worked-example.cpp-pickle2.pickle").string());
  ASSERT_TRUE(full.ok());
  EXPECT_FALSE(nothingToReplay(*full).has_value());
}

TEST(NoHistory, InfoWorksCheckAndWhatIfExitZeroAndExportWritesNothing) {
  for (const char* name : {"state-only.pickle", "no-traces.pickle"}) {
    const std::string path = (test::testDataDir() / "no-history" / name).string();
    auto info = test::runReservoir({"info", path, "--json"});
    EXPECT_EQ(info.code, cli::kOk) << name << ": " << info.err;
    auto j = nlohmann::json::parse(info.out);
    EXPECT_EQ(j["segments"], 1) << info.out;
    auto check = test::runReservoir({"check", path});
    EXPECT_EQ(check.code, cli::kOk) << name << ": " << check.err;
    EXPECT_NE(check.out.find("nothing to replay"), std::string::npos) << check.out;
    auto check_json = test::runReservoir({"check", path, "--json"});
    EXPECT_EQ(check_json.code, cli::kOk);
    EXPECT_TRUE(nlohmann::json::parse(check_json.out).contains("nothing_to_replay"));
    auto whatif = test::runReservoir({"whatif", path, "--set", "expandable_segments:True"});
    EXPECT_EQ(whatif.code, cli::kOk) << name << ": " << whatif.err;
    EXPECT_NE(whatif.out.find("nothing to replay"), std::string::npos) << whatif.out;
    // export has no modelled run to write: it says so and writes nothing (it wrote a file of 0
    // events and 0 segments, claimed as the export).
    const auto out = std::filesystem::temp_directory_path() / ("no-history-" + std::to_string(::getpid()) + ".pickle");
    auto exported = test::runReservoir({"export", path, "--out", out.string()});
    EXPECT_EQ(exported.code, cli::kInputError) << name;
    EXPECT_NE(exported.err.find("nothing to replay"), std::string::npos) << exported.err;
    EXPECT_NE(exported.err.find("nothing written"), std::string::npos) << exported.err;
    EXPECT_EQ(exported.out.find("wrote"), std::string::npos) << exported.out;
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

TEST(MemPoolOom, AnOomFromAPoolCallSiteStaysInThePool) {
  // Captured on an H200 (torch 2.11): expandable segments, fraction 0.03, a quarter of the
  // requests inside a MemPool. A 1.63 GB request inside the pool failed: torch does not
  // release the default pools' cache for a request routed to a private pool.
  const auto path = test::testDataDir() / "traces" / "mempool-oom-expandable-s3.pickle.zst";
  auto snap = traces::readSnapshotFile(path.string());
  ASSERT_TRUE(snap.ok()) << snap.message();
  ConformanceOptions opts;
  auto report = runConformance(*snap, snap->busiestDevice(), opts);
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_FALSE(report->first_divergence.has_value())
      << report->first_divergence->event_index << ": " << report->first_divergence->expected << " vs "
      << report->first_divergence->simulated;
  EXPECT_TRUE(anyNoteHas(report->notes, "oom event(s) routed to a private pool"));
}

TEST(NewFields, PoolIdAndFxFramesAreReadKeptAndWrittenBack) {
  const auto path = test::testDataDir() / "fields" / "pool-id-fx.pickle";
  auto snap = traces::readSnapshotFile(path.string());
  ASSERT_TRUE(snap.ok()) << snap.message();
  EXPECT_EQ(snap->anomalies.count(traces::Anomaly::unknown_event_key), 0u);
  EXPECT_EQ(snap->anomalies.count(traces::Anomaly::unknown_frame_key), 0u);
  const auto& events = snap->devices[0].events;
  ASSERT_EQ(events.size(), 6u);
  EXPECT_TRUE(snap->extra(events[1]).has_pool);
  EXPECT_EQ(snap->extra(events[1]).pool, (traces::PoolId{1, 2}));
  EXPECT_TRUE(snap->extra(events[3]).pool.isDefault());
  const traces::Frame& top = snap->frames[snap->stack(events[1].stack)[0].value()];
  ASSERT_TRUE(top.fx.valid());
  const auto fx = traces::fxFields(snap->str(top.fx));
  ASSERT_EQ(fx.size(), 4u);
  EXPECT_EQ(fx[0].first, "fx_node_op");
  EXPECT_EQ(fx[1].second, "addmm");
  EXPECT_EQ(fx[3].second, "{'target': 'aten.addmm', 'args': [1, 2]}");
  EXPECT_NE(describeStack(*snap, events[1].stack).find("[fx call_function addmm]"), std::string::npos);
  // Written back: the pool ids and the FX fields survive (a dict value as its text).
  auto bytes = traces::writeSnapshotBytes(*snap);
  ASSERT_TRUE(bytes.ok()) << bytes.message();
  auto again = traces::readSnapshotBytes(*bytes, "round trip");
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->extra(again->devices[0].events[1]).pool, (traces::PoolId{1, 2}));
  EXPECT_TRUE(again->extra(again->devices[0].events[1]).has_pool);
  const traces::Frame& top2 = again->frames[again->stack(again->devices[0].events[1].stack)[0].value()];
  EXPECT_EQ(again->str(top2.fx), snap->str(top.fx));
}

TEST(NewFields, PoolIdRoutesRequestsWithoutGuessing) {
  auto snap = traces::readSnapshotFile((test::testDataDir() / "fields" / "pool-id-fx.pickle").string());
  ASSERT_TRUE(snap.ok()) << snap.message();
  ConformanceOptions opts;
  auto report = runConformance(*snap, 0, opts);
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_TRUE(report->exact()) << (report->first_divergence ? report->first_divergence->simulated : "layout");
  EXPECT_TRUE(anyNoteHas(report->notes, "pool_id"));
  // Without the field, the same requests are routed by the final segments' address ranges
  // (and an allocation of a pool whose segments were all freed would be missed).
  for (auto& e : snap->devices[0].events) snap->editExtra(e, [](traces::EventExtra& x) { x.has_pool = false; });
  auto guessed = runConformance(*snap, 0, opts);
  ASSERT_TRUE(guessed.ok());
  EXPECT_TRUE(anyNoteHas(guessed->notes, "does not record pool ids"));
}

// A sample with its capture JSON, checked: the replay finds where its peaks were reset, and the
// note names the first boundary and the last (the same as the first when it names no other).
struct FoundReset {
  std::optional<traces::Snapshot> snap;
  std::size_t dev = 0;
  ConformanceOptions opts;
  std::string note;
  std::size_t first = 0;
  std::size_t last = 0;
};

void findReset(const std::string& name, FoundReset& out) {
  const std::string path = (test::samplesDir() / name).string();
  auto snap = traces::readSnapshotFile(path);
  ASSERT_TRUE(snap.ok()) << snap.message();
  out.snap = std::move(*snap);
  auto facts = findCaptureFacts(path);
  ASSERT_TRUE(facts.has_value());
  out.dev = out.snap->busiestDevice();
  out.opts.env.capture = std::make_shared<const CaptureFacts>(*facts);
  auto report = runConformance(*out.snap, out.dev, out.opts);
  ASSERT_TRUE(report.ok()) << report.message();
  ASSERT_TRUE(report->exact());
  std::smatch m;
  for (const auto& n : report->notes)
    if (n.find("peaks were reset") != std::string::npos) out.note = n;
  ASSERT_TRUE(std::regex_search(out.note, m, std::regex("before event (\\d+)"))) << out.note;
  out.first = out.last = std::stoul(m[1]);
  if (std::regex_search(out.note, m, std::regex("up to event (\\d+)"))) out.last = std::stoul(m[1]);
}

TEST(PeakResets, FoundFromTheReplayWhereThePointSays) {
  FoundReset f;
  ASSERT_NO_FATAL_FAILURE(findReset("resume-tiny/resume-main.rank0.pickle", f));
  // resume.py resets the peaks right before step 2: the call of train_step.
  auto point = parsePoint("before:resume.py:train_step#1");
  ASSERT_TRUE(point.ok());
  auto gaps = resolvePoint(*point, *f.snap, f.dev);
  ASSERT_TRUE(gaps.ok() && !gaps->empty());
  EXPECT_LE(f.first, (*gaps)[0].boundary) << f.note;
  EXPECT_GE(f.last, (*gaps)[0].boundary) << f.note;
  // Switched off, the same replay reports the .peak mismatches.
  f.opts.find_peak_resets = false;
  auto plain = runConformance(*f.snap, f.dev, f.opts);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->exact());
}

// The range a search reports is the whole of the resets that fit: a reset at either end makes
// the replay exact, one boundary outside either end does not.
TEST(PeakResets, TheFoundRangeEndsWhereTheResetsThatFitEnd) {
  for (const char* name : {"resume-tiny/resume-main.rank0.pickle", "resume-tiny/resume-main.rank1.pickle",
                           "resume-tiny/resume-postload.rank0.pickle", "resume-tiny/fresh.rank0.pickle",
                           "resume-expandable/resume-main.rank0.pickle"}) {
    SCOPED_TRACE(name);
    FoundReset f;
    ASSERT_NO_FATAL_FAILURE(findReset(name, f));
    auto exactWithResetAt = [&](std::size_t b) {
      ConformanceOptions given = f.opts;
      given.reset_peaks_at = {static_cast<std::uint32_t>(b)};
      auto r = runConformance(*f.snap, f.dev, given);
      return r.ok() && r->exact();
    };
    EXPECT_TRUE(exactWithResetAt(f.first)) << f.note;
    EXPECT_TRUE(exactWithResetAt(f.last)) << f.note;
    EXPECT_TRUE(exactWithResetAt(f.first + (f.last - f.first) / 2)) << f.note;
    ASSERT_GT(f.first, 1u) << f.note;
    EXPECT_FALSE(exactWithResetAt(f.first - 1)) << f.note;
    EXPECT_FALSE(exactWithResetAt(f.last + 1)) << f.note;
  }
}

TEST(PeakResets, PeaksNoResetExplainsAreNamedNotHidden) {
  const std::string path = (test::samplesDir() / "resume-tiny/resume-main.rank0.pickle").string();
  auto snap = traces::readSnapshotFile(path);
  ASSERT_TRUE(snap.ok());
  auto facts = findCaptureFacts(path);
  ASSERT_TRUE(facts.has_value());
  facts->memory_stats["allocated_bytes.all.peak"] = 1;  // below every state the program had
  ConformanceOptions opts;
  opts.env.capture = std::make_shared<const CaptureFacts>(*facts);
  auto report = runConformance(*snap, snap->busiestDevice(), opts);
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->exact());
  EXPECT_TRUE(anyNoteHas(report->notes, "no single reset explains them"));
}

TEST(PeakEvent, TheRecordingSeriesAndTheWhatIfReportAgree) {
  const std::string path = (test::samplesDir() / "resume-tiny/resume-main.rank0.pickle").string();
  auto loaded = loadTraceFile(path, std::nullopt, nullptr, {});
  ASSERT_TRUE(loaded) << loaded.message();
  WhatIfOptions o;
  o.edits.push_back(*parseCleanup("after:state_dict_loader.py:load"));
  auto rep = runWhatIf((*loaded)->trace.snapshot, (*loaded)->device_index, (*loaded)->environment(), o);
  ASSERT_TRUE(rep.ok()) << rep.message();
  ASSERT_TRUE(rep->baseline_matches_recording);
  // One definition: the event at which reserved first reaches its peak (a segment_alloc or
  // segment_map), in the GUI's facts and in the report.
  EXPECT_EQ(rep->baseline.peak_reserved.event, (*loaded)->series.peak_reserved_event);
  const auto action =
      (*loaded)->snapshot().devices[(*loaded)->device_index].events[rep->baseline.peak_reserved.event].action;
  EXPECT_TRUE(action == traces::Action::kSegmentAlloc || action == traces::Action::kSegmentMap);
}

TEST(PointsCountCalls, TheResetBeforeStepTwoIsTheSecondCallOfTrainStep) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  const auto dir = test::sharedTracesDir() / "scale";
  std::size_t checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string path = entry.path().string();
    if (!path.ends_with(".pickle")) continue;
    auto facts = findCaptureFacts(path);
    ASSERT_TRUE(facts.has_value()) << path;
    auto snap = traces::readSnapshotFile(path);
    ASSERT_TRUE(snap.ok()) << snap.message();
    const std::size_t dev = snap->busiestDevice();
    // Two training steps, two calls: backward-thread events (no Python frames, or frames run
    // by the autograd engine's callbacks) inside a call no longer split it.
    auto all = resolvePoint(*parsePoint("before:train_step"), *snap, dev);
    ASSERT_TRUE(all.ok()) << all.message();
    EXPECT_EQ(all->size(), 2u) << path;
    // resume.py's measure_step resets the peaks, then calls train_step: with the reset at
    // call #2 every statistic of the capture matches, peaks included.
    auto gaps = resolvePoint(*parsePoint("before:train_step#2"), *snap, dev);
    ASSERT_TRUE(gaps.ok() && gaps->size() == 1u) << path;
    ConformanceOptions opts;
    opts.env.capture = std::make_shared<const CaptureFacts>(*facts);
    opts.reset_peaks_at = {(*gaps)[0].boundary};
    auto report = runConformance(*snap, dev, opts);
    ASSERT_TRUE(report.ok()) << report.message();
    EXPECT_TRUE(report->exact()) << path
                                 << (report->stats_mismatches.empty() ? "" : ": " + report->stats_mismatches[0].what);
    ++checked;
  }
  EXPECT_EQ(checked, 9u);
}

TEST(SkipActions, ATraceWithoutFreeRequestsIsRecognisedNotAnError) {
  auto snap = traces::readSnapshotFile((test::samplesDir() / "resume-tiny/resume-main.rank0.pickle").string());
  ASSERT_TRUE(snap.ok()) << snap.message();
  const std::size_t dev = snap->busiestDevice();
  auto& events = snap->devices[dev].events;
  EXPECT_TRUE(traces::inferSkippedActions(snap->devices[dev]).empty());
  // _record_memory_history(skip_actions=["free_requested"]) leaves only free_completed.
  std::erase_if(events, [](const traces::TraceEvent& e) { return e.action == traces::Action::kFreeRequested; });
  EXPECT_EQ(traces::inferSkippedActions(snap->devices[dev]),
            std::vector<traces::Action>{traces::Action::kFreeRequested});
  const auto requests = traces::buildRequestStream(snap->devices[dev], snap->extras);
  EXPECT_EQ(requests.anomalies.count(traces::Anomaly::free_completed_without_request), 0u);
  ConformanceOptions opts;
  auto report = runConformance(*snap, dev, opts);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.message().find("skip_actions=[\"free_requested\"]"), std::string::npos) << report.message();
  EXPECT_NE(report.message().find("cannot be answered"), std::string::npos);
}

TEST(RingExpandable, TheStartStateHoldsTheMappedReservationsAndTheWhatIfBaselineMatches) {
  // Captured on an H200 (torch 2.11): expandable segments, a 1500-entry ring buffer over
  // ~3000 requests, so the window starts with pages mapped in each stream's reservations.
  for (const char* name : {"ring-expandable-s4", "ring-expandable-mempool-s6"}) {
    const std::string path = (test::testDataDir() / "traces" / (std::string(name) + ".pickle.zst")).string();
    auto snap = traces::readSnapshotFile(path);
    ASSERT_TRUE(snap.ok()) << snap.message();
    const std::size_t dev = snap->busiestDevice();
    auto start = traces::rebuildWindowStart(*snap, dev, traces::buildRequestStream(snap->devices[dev], snap->extras));
    ASSERT_TRUE(start.ok()) << name << ": " << start.message();
    EXPECT_FALSE(start->complete);
    std::size_t expandable = 0;
    for (const auto& seg : start->segments) {
      if (!seg.is_expandable) continue;
      ++expandable;
      EXPECT_FALSE(seg.mapped.empty());
      EXPECT_EQ(seg.mapped.front().first, seg.addr) << name;  // the base is the lowest address seen mapped
      EXPECT_LE(seg.reservedBytes(), seg.size);
    }
    EXPECT_GE(expandable, 2u) << name;  // small and large pools at least
    auto facts = findCaptureFacts(path);
    WhatIfOptions o;
    o.edits.push_back(*parseCleanup("event:700"));
    ReplayEnvironment env;
    if (facts) env.capture = std::make_shared<const CaptureFacts>(*facts);
    auto rep = runWhatIf(std::make_shared<const traces::Snapshot>(std::move(*snap)), dev, env, o);
    ASSERT_TRUE(rep.ok()) << rep.message();
    EXPECT_TRUE(rep->baseline_matches_recording) << name;
    EXPECT_LE(rep->whatif.peak_reserved.bytes, rep->baseline.peak_reserved.bytes) << name;
  }
}

TEST(NewFields, ForwardFramesServePointsAndCallSitesAndAreKept) {
  const auto path = test::testDataDir() / "fields" / "forward-frames.pickle";
  auto snap = traces::readSnapshotFile(path.string());
  ASSERT_TRUE(snap.ok()) << snap.message();
  EXPECT_EQ(snap->anomalies.count(traces::Anomaly::unknown_event_key), 0u);
  const auto& events = snap->devices[0].events;
  ASSERT_TRUE(snap->extra(events[2]).has_forward_frames);
  EXPECT_TRUE(snap->stack(events[2].stack).empty());
  EXPECT_EQ(snap->stack(snap->callStack(events[2])).size(), 3u);
  // One call of train_step: the backward entry counts at its forward frames.
  auto calls = resolvePoint(*parsePoint("before:train_step"), *snap, 0);
  ASSERT_TRUE(calls.ok()) << calls.message();
  EXPECT_EQ(calls->size(), 1u);
  auto fwd = resolvePoint(*parsePoint("before:model.py:forward"), *snap, 0);
  ASSERT_TRUE(fwd.ok()) << fwd.message();
  EXPECT_EQ((*fwd)[0].boundary, 2u);
  // The allocation's call site is the forward stack.
  const auto requests = traces::buildRequestStream(snap->devices[0], snap->extras);
  ASSERT_EQ(requests.allocations.size(), 2u);
  EXPECT_EQ(requests.allocations[1].stack, snap->extra(events[2]).forward_stack);
  // Kept on export.
  auto bytes = traces::writeSnapshotBytes(*snap);
  ASSERT_TRUE(bytes.ok());
  auto again = traces::readSnapshotBytes(*bytes, "round trip");
  ASSERT_TRUE(again.ok()) << again.message();
  const traces::EventExtra& kept = again->extra(again->devices[0].events[2]);
  ASSERT_TRUE(kept.has_forward_frames);
  EXPECT_EQ(again->stack(kept.forward_stack).size(), 3u);
  ConformanceOptions opts;
  auto report = runConformance(*snap, 0, opts);
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_TRUE(report->exact());
}

}  // namespace
}  // namespace reservoir::replay
