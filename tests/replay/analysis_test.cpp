// The analyses on top of the what-if engine: sweep (where cleanup belongs), gate (a CI budget)
// and export (the prediction as a snapshot), on the bundled resume traces.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>

#include "cli.h"
#include "cli_runner.h"
#include "reservoir/replay/export.h"
#include "reservoir/replay/report_json.h"
#include "reservoir/replay/report_text.h"
#include "reservoir/replay/sweep.h"
#include "reservoir/replay/trace.h"
#include "reservoir/replay/whatif.h"
#include "reservoir/traces/reader.h"
#include "test_paths.h"

namespace reservoir::replay {
namespace {

constexpr const char* kAfterLoad = "after:state_dict_loader.py:load";

struct Loaded {
  std::shared_ptr<const traces::Snapshot> snapshot;
  std::size_t device = 0;
};

Loaded loadPath(const std::string& path) {
  auto trace = readTrace(path);
  EXPECT_TRUE(trace.ok()) << trace.message();
  if (!trace) return {std::make_shared<const traces::Snapshot>(), 0};
  return Loaded{trace->snapshot, trace->snap().busiestDevice()};
}

Loaded load(const std::string& rel) { return loadPath((test::samplesDir() / rel).string()); }

// A sweep of `l` (two threads) with `objective` and `checkpoint_every`; an error fails the test.
Expected<SweepReport> sweepOf(const Loaded& l, const std::string& objective = "peak",
                              std::uint32_t checkpoint_every = SweepOptions{}.checkpoint_every) {
  auto prepared = prepareTrace(l.snapshot, l.device, ReplayEnvironment{});
  if (!prepared) return prepared.status();
  SweepOptions o;
  o.objective = *parseSweepObjective(objective);
  o.jobs = 2;
  o.checkpoint_every = checkpoint_every;
  return runSweep(*prepared, o);
}

// What the what-if engine says for a candidate's flags (cleanups only), from scratch.
WhatIfReport whatIfFor(const Loaded& l, const std::vector<std::string>& flags) {
  WhatIfOptions opts;
  opts.analyze_peak = false;
  for (std::size_t i = 0; i + 1 < flags.size(); i += 2) {
    EXPECT_EQ(flags[i], "--cleanup");
    opts.edits.push_back(*parseCleanup(flags[i + 1]));
  }
  auto rep = runWhatIf(l.snapshot, l.device, ReplayEnvironment{}, opts);
  EXPECT_TRUE(rep.ok()) << rep.message();
  return *rep;
}

bool isCleanupOnly(const SweepCandidate& c) {
  for (std::size_t i = 0; i < c.edits.size(); i += 2)
    if (c.edits[i] != "--cleanup") return false;
  return !c.edits.empty();
}

// The measured fix (cleanup right after dcp.load) brings reserved at the broadcast down to
// 4448059392 bytes on the GPU; the sweep, minimizing reserved there, must do at least as well
// and rank that placement with that figure.
// The export rule every front end calls (the CLI's --out/--csv, the GUI's export): no output over
// the trace, its capture JSON or another output, however the path is spelled; devices may repeat.
TEST(ExportTargets, NoOutputOverAnInputOrAnotherOutput) {
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / ("reservoir-targets-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string trace = (dir / "t.pickle.zst").string();
  std::ofstream(trace) << "x";
  fs::create_symlink(trace, dir / "alias");
  auto refused = [&](std::vector<std::pair<std::string, std::string>> outputs, const std::string& words) {
    const Status st = checkExportTargets(trace, outputs);
    EXPECT_TRUE(st.isUsage()) << words;
    EXPECT_NE(st.message().find(words), std::string::npos) << st.message();
  };
  refused({{"the export", (dir / "alias").string()}}, "the export " + (dir / "alias").string() + " is the trace");
  refused({{"--csv", (dir / "." / "t.json").string()}}, "is the trace's capture JSON");
  refused({{"--out", (dir / "o").string()}, {"--csv", (dir / "sub" / ".." / "o").string()}},
          "--out and --csv name the same file");
  EXPECT_TRUE(checkExportTargets(trace, {{"--out", (dir / "o").string()}, {"--csv", ""}}).ok());
  EXPECT_TRUE(checkExportTargets(trace, {{"--out", "/dev/null"}, {"--csv", "/dev/null"}}).ok());
  // A capture JSON read from elsewhere (a snapshot loaded from memory with its facts) is an input too.
  const std::string facts = (dir / "facts.json").string();
  const Status given = checkExportTargets(trace, {{"csv", facts}}, facts);
  EXPECT_TRUE(given.isUsage());
  EXPECT_NE(given.message().find("csv " + facts + " is the capture JSON the trace was read with"), std::string::npos)
      << given.message();
  EXPECT_FALSE(checkExportTargets("<bytes>", {{"csv", facts}}, facts).ok());
  EXPECT_TRUE(checkExportTargets("<bytes>", {{"csv", (dir / "o.csv").string()}}, facts).ok());
  // A NUL byte would cut the name where the system reads it: refused, whatever follows it.
  const Status nul = checkExportTargets(trace, {{"path", (dir / "o").string() + std::string(1, '\0') + "x"}});
  EXPECT_TRUE(nul.isUsage());
  EXPECT_NE(nul.message().find("path contains a NUL byte"), std::string::npos) << nul.message();
  fs::remove_all(dir);
}

// A cancel stops the export before anything is written: no file, no temporary, the error says so.
TEST(ExportTargets, ACancelledExportWritesNothing) {
  namespace fs = std::filesystem;
  const Loaded l = load("resume-tiny/resume-main.rank0.pickle");
  auto prepared = prepareTrace(l.snapshot, l.device, ReplayEnvironment{});
  ASSERT_TRUE(prepared.ok()) << prepared.message();
  const auto dir = fs::temp_directory_path() / ("reservoir-cancel-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string out = (dir / "o.pickle").string(), csv = (dir / "o.csv").string();
  std::atomic<bool> cancel{true};
  auto r = writeEditedRun(*prepared, {}, WhatIfOptions{}, out, csv, &cancel);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("cancelled"), std::string::npos) << r.message();
  EXPECT_TRUE(fs::is_empty(dir));
  cancel = false;
  auto done = writeEditedRun(*prepared, {}, WhatIfOptions{}, out, csv, &cancel);
  ASSERT_TRUE(done.ok()) << done.message();
  EXPECT_TRUE(fs::exists(out) && fs::exists(csv));
  fs::remove_all(dir);
}

// A cancelled sweep stops within its baseline pass (it checks every 4096 ops) instead of
// replaying to the end: no candidate, cancelled said.
TEST(Sweep, ACancelStopsItInTheBaselinePass) {
  const Loaded l = load("resume-tiny/resume-main.rank0.pickle");
  auto prepared = prepareTrace(l.snapshot, l.device, ReplayEnvironment{});
  ASSERT_TRUE(prepared.ok()) << prepared.message();
  std::atomic<bool> cancel{true};
  SweepOptions o;
  o.cancel = &cancel;
  auto rep = runSweep(*prepared, o);
  ASSERT_TRUE(rep.ok()) << rep.message();
  EXPECT_TRUE(rep->cancelled);
  EXPECT_TRUE(rep->candidates.empty());
  EXPECT_FALSE(prepareTrace(l.snapshot, l.device, ReplayEnvironment{}, &cancel).ok());
}

// Each candidate says what it changes as data; its flags ("edits", what sweep --json has always
// listed) are made from it.
TEST(Sweep, CandidatesDescribeTheirChangesAsData) {
  const Loaded l = load("resume-tiny/resume-main.rank0.pickle");
  auto rep = sweepOf(l);
  ASSERT_TRUE(rep.ok()) << rep.message();
  bool cleanup = false, settings = false;
  for (const auto& c : rep->candidates) {
    ASSERT_EQ(c.changes.size(), 1u) << c.description;
    EXPECT_EQ(c.edits, changeFlags(c.changes));
    const auto& ch = c.changes[0];
    if (ch.kind == CandidateChange::Kind::kCleanup) {
      cleanup = true;
      EXPECT_FALSE(ch.point.empty());
      EXPECT_TRUE(ch.settings.empty());
      EXPECT_EQ(c.edits, (std::vector<std::string>{"--cleanup", ch.point}));
    } else {
      settings = true;
      EXPECT_TRUE(c.settings);
      EXPECT_EQ(c.edits, (std::vector<std::string>{"--set", ch.settings}));
    }
  }
  EXPECT_TRUE(cleanup && settings);
  // The structured form survives the JSON that carries reports between processes.
  const auto back = sweepReportFromJson(sweepJson(*rep, "t", rep->candidates.size()));
  ASSERT_EQ(back.candidates.size(), rep->candidates.size());
  for (std::size_t i = 0; i < back.candidates.size(); ++i)
    EXPECT_EQ(back.candidates[i].changes, rep->candidates[i].changes);
  const auto j = sweepJson(*rep, "t", 3);
  EXPECT_EQ(j["candidates"][0]["changes"][0]["kind"], candidateChangeKindName(rep->candidates[0].changes[0].kind));
  EXPECT_TRUE(j["objective_point"].is_null());
  EXPECT_EQ(sweepJson(*sweepOf(l, "reserved:event:10"), "t", 1)["objective_point"], "event:10");
  // Over several traces a candidate keeps its changes.
  const auto worst = worstOverTraces({*rep, *rep});
  for (const auto& c : worst.candidates) EXPECT_EQ(c.edits, changeFlags(c.changes));
}

TEST(Sweep, FindsAPlacementAtLeastAsGoodAsTheMeasuredFix) {
  const Loaded l = load("resume-expandable/resume-main.rank0.pickle");
  auto rep = sweepOf(l, "reserved:before:broadcast_weights");
  ASSERT_TRUE(rep.ok()) << rep.message();
  ASSERT_FALSE(rep->candidates.empty());
  ASSERT_TRUE(rep->baseline_reserved_at_point.has_value());
  EXPECT_EQ(*rep->baseline_reserved_at_point, 7363100672);  // resume-main, measured
  const auto& best = rep->candidates.front();
  ASSERT_TRUE(best.reserved_at_point.has_value());
  EXPECT_LE(*best.reserved_at_point, 4448059392);
  bool fix_ranked = false;
  for (const auto& c : rep->candidates)
    if (c.edits == std::vector<std::string>{"--cleanup", kAfterLoad}) {
      fix_ranked = true;
      EXPECT_EQ(c.reserved_at_point, 4448059392);
    }
  EXPECT_TRUE(fix_ranked) << "the measured fix's placement is not among the ranked candidates";
}

// Candidates resume from checkpoints of one baseline pass and run on several threads: each
// must equal the what-if engine run from the start with the same edits.
TEST(Sweep, EveryCandidateEqualsAFreshWhatIf) {
  const Loaded l = load("resume-tiny/resume-main.rank0.pickle");
  auto rep = sweepOf(l, "peak", 64);  // many checkpoints on a small trace
  ASSERT_TRUE(rep.ok()) << rep.message();
  EXPECT_EQ(rep->baseline_peak_reserved, 534773760);
  std::size_t compared = 0;
  for (const auto& c : rep->candidates) {
    if (!isCleanupOnly(c)) continue;
    const auto w = whatIfFor(l, c.edits);
    EXPECT_EQ(c.peak_reserved, w.whatif.peak_reserved.bytes) << c.description;
    EXPECT_EQ(c.peak_allocated, w.whatif.peak_allocated.bytes) << c.description;
    EXPECT_EQ(c.saving, rep->baseline_peak_reserved - c.peak_reserved) << c.description;
    ++compared;
  }
  EXPECT_GE(compared, 5u);
  // Placements at other events between the same allocator requests share one replay (this
  // trace has such names for one placement); each still equals its own what-if above.
  EXPECT_LT(rep->replays, rep->evaluated);
  EXPECT_GT(rep->replays, 0u);
  // Best first within each group (no OOM and within the call cap first).
  for (std::size_t i = 1; i < rep->candidates.size(); ++i) {
    const auto &x = rep->candidates[i - 1], &y = rep->candidates[i];
    if (x.oom == y.oom && x.within_cap == y.within_cap)
      EXPECT_GE(x.saving, y.saving) << "not ranked best first at " << i;
    else
      EXPECT_TRUE(!x.oom && (x.oom != y.oom || x.within_cap)) << "a capped or OOM candidate first at " << i;
  }
}

// On a device the run does not fit, a candidate that still does not fit says so: OOM is "runs
// out of memory on the sweep's device", not only "where the unedited run did not". A candidate
// that fits (its own peak as the capacity) is not OOM and ranks before those that are.
TEST(Sweep, OnADeviceTooSmallEveryCandidateThatDoesNotFitIsOom) {
  const Loaded l = load("resume-tiny/resume-main.rank0.pickle");
  auto prepared = prepareTrace(l.snapshot, l.device, ReplayEnvironment{});
  ASSERT_TRUE(prepared.ok()) << prepared.message();
  SweepOptions o;
  o.jobs = 2;
  o.capacity = ByteCount{64} << 20;
  auto small = runSweep(*prepared, o);
  ASSERT_TRUE(small.ok()) << small.message();
  ASSERT_GT(small->candidates.size(), 1u);
  for (const auto& c : small->candidates) EXPECT_TRUE(c.oom) << c.description;
  EXPECT_TRUE(small->pareto.empty()) << "a front of candidates that do not fit";
  auto free = sweepOf(l);
  ASSERT_TRUE(free.ok()) << free.message();
  const auto best = std::find_if(free->candidates.begin(), free->candidates.end(),
                                 [](const SweepCandidate& c) { return c.saving > 0 && !c.settings; });
  ASSERT_NE(best, free->candidates.end());
  o.capacity = static_cast<ByteCount>(best->peak_reserved);
  auto tight = runSweep(*prepared, o);
  ASSERT_TRUE(tight.ok()) << tight.message();
  bool after_oom = false, fix_fits = false;
  for (const auto& c : tight->candidates) {
    if (c.edits == best->edits) fix_fits = !c.oom;
    if (c.oom)
      after_oom = true;
    else
      EXPECT_FALSE(after_oom) << "a candidate that fits ranked after one that does not: " << c.description;
    if (c.pareto) {
      EXPECT_FALSE(c.oom) << c.description;
    }
  }
  EXPECT_TRUE(fix_fits) << best->description;
}

// The seeds' human fix (one cleanup right after the checkpoint load) ranks first among the
// one-call placements, minimizing reserved at the broadcast, on every resume trace; the trace
// shows one training step, so the default cap is one call.
TEST(Sweep, TheHumanFixRanksFirstAmongOneCallPlacements) {
  std::vector<std::filesystem::path> paths = {test::samplesDir() / "resume-expandable/resume-main.rank0.pickle",
                                              test::samplesDir() / "resume-tiny/resume-main.rank0.pickle",
                                              test::samplesDir() / "resume-tiny/resume-main.rank1.pickle"};
  if (!test::sharedTracesDir().empty())
    paths.push_back(test::sharedTrace("resume-expandable/resume-main.rank1.pickle"));
  for (const auto& path : paths) {
    SCOPED_TRACE(path.string());
    const Loaded l = loadPath(path.string());
    auto rep = sweepOf(l, "reserved:before:broadcast_weights");
    ASSERT_TRUE(rep.ok()) << rep.message();
    ASSERT_TRUE(rep->steps.has_value());
    EXPECT_EQ(rep->steps->count, 1u) << rep->steps->source;
    EXPECT_EQ(rep->max_calls, std::optional<std::size_t>(1));
    const SweepCandidate* first = nullptr;
    for (const auto& c : rep->candidates)
      if (!c.settings && c.empty_cache_calls == 1) {
        first = &c;
        break;
      }
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(first->edits, (std::vector<std::string>{"--cleanup", kAfterLoad})) << first->description;
    EXPECT_GT(first->saving, 0);
    EXPECT_GT(first->price_seconds, 0.0);
  }
}

// On a trace of two training steps (a scale/ rank) the default cap is one call per step, and
// the top answers run at most once per step.
TEST(Sweep, OnATwoStepTraceTheTopAnswersRunAtMostOncePerStep) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  const Loaded l = loadPath(test::sharedTrace("scale/w4-s4096.rank0.pickle").string());
  auto rep = sweepOf(l);
  ASSERT_TRUE(rep.ok()) << rep.message();
  ASSERT_TRUE(rep->steps.has_value());
  EXPECT_EQ(rep->steps->count, 2u) << rep->steps->source;
  EXPECT_EQ(rep->max_calls, std::optional<std::size_t>(2));
  ASSERT_GE(rep->candidates.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    const auto& c = rep->candidates[i];
    EXPECT_TRUE(c.within_cap) << c.description;
    if (!c.settings) {
      EXPECT_LE(*c.calls_per_step, 1.0) << c.description;
    }
  }
  bool over_cap_saves_more = false;  // the cap matters: something over it would save more
  for (const auto& c : rep->candidates)
    over_cap_saves_more = over_cap_saves_more || (!c.within_cap && c.saving > rep->candidates.front().saving);
  EXPECT_TRUE(over_cap_saves_more);
}

// Every candidate carries its calls and price; settings cost nothing; the order is: within
// the cap, then the largest saving, then the lowest price; the Pareto front is undominated.
TEST(Sweep, CallsPriceCapAndParetoFront) {
  const Loaded l = load("resume-expandable/resume-main.rank0.pickle");
  auto prepared = prepareTrace(l.snapshot, l.device, ReplayEnvironment{});
  ASSERT_TRUE(prepared.ok()) << prepared.message();
  SweepOptions o;
  o.jobs = 2;
  o.max_calls = 2;
  auto rep = runSweep(*prepared, o);
  ASSERT_TRUE(rep.ok()) << rep.message();
  ASSERT_FALSE(rep->candidates.empty());
  EXPECT_EQ(rep->max_calls_source, "given");
  bool saw_settings = false, saw_over_cap = false;
  for (const auto& c : rep->candidates) {
    EXPECT_EQ(c.within_cap, c.empty_cache_calls <= 2) << c.description;
    if (c.settings) {
      saw_settings = true;
      EXPECT_EQ(c.price_seconds, 0.0) << c.description;
      EXPECT_EQ(c.empty_cache_calls, 0u);
    } else {
      EXPECT_GE(c.price_seconds, static_cast<double>(c.empty_cache_calls) * o.price.sync_seconds) << c.description;
      ASSERT_TRUE(c.calls_per_step.has_value());
      EXPECT_DOUBLE_EQ(*c.calls_per_step,
                       static_cast<double>(c.empty_cache_calls) / static_cast<double>(rep->steps->count));
      // The price of one step's calls: the whole run's over its steps (a front end derives nothing).
      ASSERT_TRUE(c.price_per_step_seconds.has_value());
      EXPECT_DOUBLE_EQ(*c.price_per_step_seconds, c.price_seconds / static_cast<double>(rep->steps->count));
    }
    saw_over_cap = saw_over_cap || !c.within_cap;
  }
  EXPECT_TRUE(saw_settings);
  EXPECT_TRUE(saw_over_cap);
  for (std::size_t i = 1; i < rep->candidates.size(); ++i)
    EXPECT_FALSE(sweepRanksBefore(rep->candidates[i], rep->candidates[i - 1])) << "not in rank order at " << i;
  ASSERT_FALSE(rep->pareto.empty());
  for (std::size_t i : rep->pareto) {
    const auto& f = rep->candidates[i];
    EXPECT_TRUE(f.pareto);
    for (const auto& c : rep->candidates) {
      if (!c.oom && &c != &f) {
        EXPECT_FALSE(c.saving >= f.saving && c.price_seconds <= f.price_seconds &&
                     (c.saving > f.saving || c.price_seconds < f.price_seconds))
            << f.description << " is dominated by " << c.description;
      }
    }
  }
  for (std::size_t k = 1; k < rep->pareto.size(); ++k)
    EXPECT_LE(rep->candidates[rep->pareto[k - 1]].price_seconds, rep->candidates[rep->pareto[k]].price_seconds);
}

// The candidates arrive one by one as they are replayed, scored as the final ranking has them.
TEST(Sweep, CandidatesArriveAsTheyAreReplayed) {
  const Loaded l = load("resume-tiny/resume-main.rank0.pickle");
  auto prepared = prepareTrace(l.snapshot, l.device, ReplayEnvironment{});
  ASSERT_TRUE(prepared.ok()) << prepared.message();
  std::vector<SweepCandidate> arrived;
  SweepOptions o;
  o.jobs = 2;
  o.on_candidate = [&](const SweepCandidate& c) { arrived.push_back(c); };
  auto rep = runSweep(*prepared, o);
  ASSERT_TRUE(rep.ok()) << rep.message();
  ASSERT_EQ(arrived.size(), rep->candidates.size());
  for (const auto& c : rep->candidates) {
    const auto it = std::find_if(arrived.begin(), arrived.end(), [&](const auto& a) { return a.edits == c.edits; });
    ASSERT_NE(it, arrived.end()) << c.description;
    EXPECT_EQ(it->saving, c.saving);
    EXPECT_EQ(it->price_seconds, c.price_seconds);
    EXPECT_EQ(it->within_cap, c.within_cap);
  }
}

TEST(Sweep, ObjectivesParseAndAPointAloneMeansReservedThere) {
  auto alias = parseSweepObjective("before:broadcast_weights");
  ASSERT_TRUE(alias.ok());
  EXPECT_EQ(alias->kind, SweepObjective::Kind::kReservedAt);
  EXPECT_EQ(alias->text(), "reserved:before:broadcast_weights");
  auto in = parseSweepObjective("peak-in:nccl:broadcast");
  ASSERT_TRUE(in.ok());
  EXPECT_EQ(in->annotation, "nccl:broadcast");
  EXPECT_EQ(parseSweepObjective("peak")->kind, SweepObjective::Kind::kPeak);
  EXPECT_FALSE(parseSweepObjective("peak-in:").ok());
  EXPECT_FALSE(parseSweepObjective("lowest").ok());
}

// peak-in:ANNOTATION: the baseline's figure is the highest reserved inside the annotation's
// ranges, never above the run's peak, and a candidate's saving is measured there.
TEST(Sweep, PeakInAnAnnotation) {
  const Loaded l = load("resume-tiny/resume-main.rank0.pickle");
  auto prepared = prepareTrace(l.snapshot, l.device, ReplayEnvironment{});
  ASSERT_TRUE(prepared.ok()) << prepared.message();
  SweepOptions o;
  o.objective = *parseSweepObjective("peak-in:nccl:broadcast");
  o.jobs = 2;
  o.try_settings = false;
  auto rep = runSweep(*prepared, o);
  ASSERT_TRUE(rep.ok()) << rep.message();
  EXPECT_GT(rep->baseline_objective, 0);
  EXPECT_LT(rep->baseline_objective, rep->baseline_peak_reserved);
  ASSERT_FALSE(rep->candidates.empty());
  EXPECT_GT(rep->candidates.front().saving, 0);
  for (const auto& c : rep->candidates) {
    ASSERT_TRUE(c.peak_in.has_value()) << c.description;
    EXPECT_EQ(c.saving, rep->baseline_objective - *c.peak_in);
  }
  SweepOptions bad = o;
  bad.objective = *parseSweepObjective("peak-in:no_such_range");
  EXPECT_FALSE(runSweep(*prepared, bad).ok());
}

test::CliResult cli(std::vector<std::string> args) { return test::runReservoir(std::move(args)); }

// The what-if report starts with one sentence, in the CLI's text (its first line) and JSON.
TEST(WhatIfVerdict, OneSentenceFirst) {
  const std::string t = (test::samplesDir() / "resume-expandable/resume-main.rank0.pickle").string();
  const auto r = cli({"whatif", t, "--cleanup", kAfterLoad, "--probe", kAfterLoad});
  ASSERT_EQ(r.code, cli::kOk) << r.err;
  const std::string first = r.out.substr(0, r.out.find('\n'));
  EXPECT_TRUE(
      first.starts_with("empty_cache after state_dict_loader.py:load: reserved there 6.86 -> 4.14 GiB; run "
                        "peak unchanged at 25.33 GiB (event "))
      << first;
  EXPECT_NE(first.find("1 empty_cache call, about "), std::string::npos) << first;
  EXPECT_EQ(r.out.find("give --"), std::string::npos) << r.out;
  const auto j = cli({"whatif", t, "--cleanup", kAfterLoad, "--probe", kAfterLoad, "--json"});
  ASSERT_EQ(j.code, cli::kOk) << j.err;
  EXPECT_NE(j.out.find("\"verdict\": \"" + first + "\""), std::string::npos) << j.out.substr(0, 400);
  const auto settings = cli({"whatif", t, "--set", "expandable_segments:True,max_split_size_mb:128"});
  ASSERT_EQ(settings.code, cli::kOk) << settings.err;
  EXPECT_TRUE(settings.out.starts_with("settings ")) << settings.out.substr(0, 200);
}

TEST(SweepWords, CallsPerStepReadAsPeopleCountThem) {
  EXPECT_EQ(perStepWords(2.0), "2 per step");
  EXPECT_EQ(perStepWords(0.5), "1 every 2 steps");
  EXPECT_EQ(perStepWords(1.0 / 150.0), "1 every 150 steps");
  EXPECT_EQ(perStepWords(0.0), "none");
  EXPECT_EQ(perStepWords(1.0), "1 per step");
}

TEST(SweepCli, ObjectivesCapAndJsonFields) {
  const std::string t = (test::samplesDir() / "resume-tiny/resume-main.rank0.pickle").string();
  const auto r = cli({"sweep", t, "--jobs", "2", "--minimize", "before:broadcast_weights", "--top", "3"});
  ASSERT_EQ(r.code, cli::kOk) << r.err;
  EXPECT_NE(r.out.find("minimizing reserved at before:broadcast_weights"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("at most 1 in the trace, one per training step"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the Pareto front"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" in all, "), std::string::npos) << r.out;  // the price per step beside the whole run's
  const auto j = cli({"sweep", t, "--jobs", "2", "--max-calls", "3", "--json", "--top", "1000"});
  ASSERT_EQ(j.code, cli::kOk) << j.err;
  for (const char* key : {"\"empty_cache_calls\"", "\"price_seconds\"", "\"calls_per_step\"",
                          "\"price_per_step_seconds\"", "\"pareto\"",
                          "\"max_calls\": 3", "\"within_cap\": false"})
    EXPECT_NE(j.out.find(key), std::string::npos) << key;
  EXPECT_EQ(cli({"sweep", t, "--minimize", "lowest"}).code, cli::kUsage);
  EXPECT_EQ(cli({"sweep", t, "--max-calls", "-1"}).code, cli::kUsage);
  EXPECT_EQ(cli({"sweep", t, "--steps", "0"}).code, cli::kUsage);
  const auto steps = cli({"sweep", t, "--jobs", "2", "--steps", "4", "--top", "1"});
  ASSERT_EQ(steps.code, cli::kOk) << steps.err;
  EXPECT_NE(steps.out.find("at most 4 in the trace, one per training step (4 step(s), from the count given)"),
            std::string::npos)
      << steps.out;
}

TEST(Gate, PassesUnderTheBudgetAndFailsOverItWithAReason) {
  const std::string t = (test::samplesDir() / "resume-tiny/resume-main.rank0.pickle").string();
  EXPECT_EQ(cli({"gate", t, "--max-peak-reserved", "600MiB"}).code, cli::kOk);
  const auto over = cli({"gate", t, "--max-peak-reserved", "500MiB"});
  EXPECT_EQ(over.code, cli::kFailed);
  EXPECT_NE((over.out + over.err).find("exceeds the budget 500.00 MiB by 10.00 MiB"), std::string::npos)
      << over.out << over.err;
  EXPECT_EQ(cli({"gate", t, "--max-peak-reserved", "lots"}).code, cli::kUsage);
}

// The prediction of the post-load cleanup, exported, is the real resume-postload trace event
// for event (actions and sizes; addresses and stream handles are per process).
TEST(Export, ThePredictionIsTheMeasuredVariantEventForEvent) {
  const auto dir = std::filesystem::temp_directory_path() / ("reservoir-export-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto out = (dir / "postload.pickle").string();
  const auto r = cli({"export", (test::samplesDir() / "resume-tiny/resume-main.rank0.pickle").string(), "--cleanup",
                      kAfterLoad, "--out", out});
  ASSERT_EQ(r.code, cli::kOk) << r.err;
  const Loaded predicted = loadPath(out);
  const Loaded measured = load("resume-tiny/resume-postload.rank0.pickle");
  const auto& p = predicted.snapshot->devices.at(0).events;
  const auto& m = measured.snapshot->devices.at(measured.device).events;
  ASSERT_EQ(p.size(), m.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    ASSERT_EQ(p[i].action, m[i].action) << "event " << i;
    ASSERT_EQ(p[i].size, m[i].size) << "event " << i;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace reservoir::replay
