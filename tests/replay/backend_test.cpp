// The replay backends' CPU side: the edited program (flattening), the model backend against the
// what-if engine and the recording, the comparison of two runs, the synthetic traces, the driver
// logic with a fake device, the op driver, and the replay job (`reservoir replay`). The GPU
// backends run in tests/gpu (label "gpu").
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli_runner.h"
#include "reservoir/replay/backend.h"
#include "reservoir/replay/backend_replay.h"
#include "reservoir/replay/edited_program.h"
#include "reservoir/replay/edited_run.h"
#include "reservoir/replay/trace.h"
#include "reservoir/replay/whatif.h"
#include "reservoir/traces/reader.h"
#include "reservoir/traces/writer.h"
#include "test_paths.h"

namespace reservoir::replay {
namespace {

struct Loaded {
  Trace trace;
  PreparedTrace prepared;
  [[nodiscard]] const traces::Snapshot& snapshot() const { return trace.snap(); }
};

std::unique_ptr<Loaded> load(const std::filesystem::path& path) {
  auto trace = readTrace(path.string());
  EXPECT_TRUE(trace.ok()) << trace.message();
  if (!trace) return nullptr;
  auto l = std::make_unique<Loaded>();
  l->trace = std::move(*trace);
  auto p = prepareTrace(l->trace.snapshot, l->snapshot().busiestDevice(), l->trace.environment());
  EXPECT_TRUE(p.ok()) << p.message();
  if (!p) return nullptr;
  l->prepared = std::move(*p);
  return l;
}

ReplayJob jobFor(const PreparedTrace& p, const EditedProgram& prog) {
  ReplayJob job;
  job.prepared = &p;
  job.program = &prog;
  job.config = p.recorded_config;
  job.fraction = p.fraction;
  job.usable = p.derived_capacity;
  return job;
}

// A synthetic trace ready to replay: prepared, and its unedited program.
struct SynthProgram {
  SynthTrace trace;
  PreparedTrace prepared;
  EditedProgram program;
};

std::unique_ptr<SynthProgram> synthProgram(const SynthOptions& o) {
  auto t = synthesizeTrace(o);
  EXPECT_TRUE(t.ok()) << t.message();
  if (!t) return nullptr;
  auto s = std::make_unique<SynthProgram>();
  s->trace = std::move(*t);
  ReplayEnvironment env;
  auto p = prepareTrace(std::make_shared<const traces::Snapshot>(std::move(s->trace.snapshot)), 0, env);
  EXPECT_TRUE(p.ok()) << p.message();
  if (!p) return nullptr;
  s->prepared = std::move(*p);
  s->program = flattenProgram(s->prepared, {});
  return s;
}

// The what-if engine's run of the same edits with a job's settings (what the model backend must equal).
RunResult engineRun(const PreparedTrace& p, const std::vector<ResolvedEdit>& es, const ReplayJob& job) {
  RunSettings rs;
  rs.config = job.config;
  rs.fraction = job.fraction;
  rs.usable = job.usable;
  return replayProgram(p, es, rs);
}

// The recording as a backend result (its events and final layout; figures from `like`).
BackendResult recordingAsResult(const Loaded& l, const BackendResult& like) {
  BackendResult r = like;
  const auto& trace = l.snapshot().devices[l.prepared.device_index];
  r.events = eventsOf(l.snapshot(), trace);
  r.segments = segmentsOf(l.snapshot(), trace.device);
  r.stats_known = false;
  return r;
}

Expected<std::vector<ResolvedEdit>> edits(const PreparedTrace& p, const std::vector<std::string>& cleanups,
                                          const std::vector<std::string>& probes = {}) {
  std::vector<Edit> es;
  for (const auto& c : cleanups) es.push_back(*parseCleanup(c));
  for (const auto& c : probes) es.push_back(*parseProbe(c));
  return resolveEdits(p, es);
}

TEST(EditedProgram, WithoutEditsItIsTheProgram) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  auto l = load(test::sharedTrace("resume-tiny/resume-main.rank0.pickle"));
  ASSERT_TRUE(l);
  const EditedProgram prog = flattenProgram(l->prepared, {});
  ASSERT_EQ(prog.ops.size(), l->prepared.program.ops.size());
  for (std::size_t i = 0; i < prog.ops.size(); ++i) EXPECT_EQ(prog.ops[i].op, i);
  EXPECT_EQ(prog.cleanups, 0u);
  EXPECT_GT(prog.mallocs, 0u);
  EXPECT_EQ(prog.requests(), prog.ops.size());
  EXPECT_FALSE(prog.streams.empty());
  EXPECT_EQ(prog.streams.front(), 0u);
}

TEST(EditedProgram, CleanupsSitWhereTheRunnerAppliesThem) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  auto l = load(test::sharedTrace("resume-tiny/resume-main.rank0.pickle"));
  ASSERT_TRUE(l);
  auto es = edits(l->prepared, {"after:state_dict_loader.py:load"}, {"after:state_dict_loader.py:load"});
  ASSERT_TRUE(es.ok()) << es.message();
  const EditedProgram prog = flattenProgram(l->prepared, *es);
  ASSERT_EQ(prog.cleanups, es->at(0).gaps.size());
  // The cleanup comes before the probe in the same gap, right before the op at that boundary.
  std::size_t cleanup_at = prog.ops.size(), probe_at = prog.ops.size();
  for (std::size_t i = 0; i < prog.ops.size(); ++i) {
    if (prog.ops[i].kind == BackendOpKind::kEmptyCache && prog.ops[i].edit == 0 && cleanup_at == prog.ops.size())
      cleanup_at = i;
    if (prog.ops[i].kind == BackendOpKind::kProbe && probe_at == prog.ops.size()) probe_at = i;
  }
  ASSERT_LT(cleanup_at, prog.ops.size());
  EXPECT_EQ(probe_at, cleanup_at + 1);
  const Gap g = es->at(0).gaps.front();
  const std::uint32_t next_op = opAtBoundary(l->prepared.program, g.boundary);
  ASSERT_LT(probe_at + 1, prog.ops.size());
  EXPECT_EQ(prog.ops[probe_at + 1].op, next_op);
}

// The model backend is the what-if engine, and on the unedited program it is the recording.
TEST(ModelBackend, EqualsTheWhatIfEngineAndTheRecording) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  for (const char* name :
       {"resume-tiny/resume-main.rank0.pickle", "synth/default-s1.pickle", "synth/expandable-s2.pickle",
        "synth/fraction-s6.pickle", "truncated/truncated-default-s22.pickle"}) {
    SCOPED_TRACE(name);
    auto l = load(test::sharedTrace(name));
    ASSERT_TRUE(l);
    const EditedProgram prog = flattenProgram(l->prepared, {});
    auto r = makeModelBackend()->run(jobFor(l->prepared, prog));
    ASSERT_TRUE(r.ok()) << r.message();
    const RunResult engine = engineRun(l->prepared, {}, jobFor(l->prepared, prog));
    EXPECT_EQ(r->peak_reserved.bytes, engine.peak_reserved.bytes);
    EXPECT_EQ(r->peak_reserved.op, engine.peak_reserved.op);
    EXPECT_EQ(r->peak_allocated.bytes, engine.peak_allocated.bytes);
    EXPECT_EQ(r->final_reserved, engine.final_reserved);
    EXPECT_EQ(r->final_allocated, engine.final_allocated);
    EXPECT_EQ(r->peak_reserved.bytes, l->prepared.recorded_peak_reserved);
    const BackendComparison c = compareResults(*r, recordingAsResult(*l, *r));
    EXPECT_TRUE(c.exact()) << (c.first_difference ? c.first_difference->reason + ": " + c.first_difference->expected +
                                                        " / " + c.first_difference->got
                               : c.layout_mismatches.empty() ? std::string("figures")
                                                             : c.layout_mismatches[0].expected);
    EXPECT_GT(c.events_compared, 1000u);
  }
}

TEST(ModelBackend, EditedRunsEqualTheWhatIfEngine) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  for (const char* name : {"resume-tiny/resume-main.rank0.pickle", "resume-expandable/resume-main.rank0.pickle"}) {
    SCOPED_TRACE(name);
    auto l = load(test::sharedTrace(name));
    ASSERT_TRUE(l);
    for (const char* cleanup : {"after:state_dict_loader.py:load", "before:broadcast_weights"}) {
      auto es = edits(l->prepared, {cleanup}, {"after:state_dict_loader.py:load"});
      ASSERT_TRUE(es.ok()) << es.message();
      const EditedProgram prog = flattenProgram(l->prepared, *es);
      auto r = makeModelBackend()->run(jobFor(l->prepared, prog));
      ASSERT_TRUE(r.ok()) << r.message();
      const RunResult engine = engineRun(l->prepared, *es, jobFor(l->prepared, prog));
      EXPECT_EQ(r->peak_reserved.bytes, engine.peak_reserved.bytes) << cleanup;
      EXPECT_EQ(r->final_reserved, engine.final_reserved) << cleanup;
      ASSERT_EQ(r->probes.size(), engine.probes.size());
      for (std::size_t i = 0; i < r->probes.size(); ++i) EXPECT_EQ(r->probes[i].reserved, engine.probes[i].reserved);
      EXPECT_EQ(r->timing.cleanups.size(), 0u);  // the model backend does not time
    }
  }
}

TEST(Compare, FindsTheFirstDifferentEvent) {
  BackendResult a;
  a.events = {{traces::Action::kSegmentAlloc, 0x1000000, 20 << 20, 0},
              {traces::Action::kAlloc, 0x1000000, 4096, 0},
              {traces::Action::kAlloc, 0x1001000, 8192, 0}};
  BackendResult b = a;
  // Another device: every address shifted; the same decisions.
  for (auto& e : b.events) e.addr += 0x40000000;
  EXPECT_TRUE(compareResults(a, b).exact());
  // Another block of the same segment.
  b.events[2].addr += 512;
  auto c = compareResults(a, b);
  ASSERT_TRUE(c.first_difference);
  EXPECT_EQ(c.first_difference->index, 2u);
  b.events[2] = a.events[2];
  b.events[2].addr += 0x40000000;
  b.events[1].size = 4097;
  c = compareResults(a, b);
  ASSERT_TRUE(c.first_difference);
  EXPECT_EQ(c.first_difference->index, 1u);
  EXPECT_EQ(c.first_difference->reason, "another size");
}

TEST(Synth, TheModelIsExactOnItsOwnTraceAndTheModelBackendReplaysIt) {
  for (const char* settings : {"", "expandable_segments:True", "max_split_size_mb:128"}) {
    SCOPED_TRACE(settings);
    SynthOptions o;
    o.events = 30'000;
    o.seed = 7;
    o.settings = settings;
    o.budget = 4ull << 30;
    o.empty_cache_every = 3000;
    auto t = synthesizeTrace(o);
    ASSERT_TRUE(t.ok()) << t.message();
    EXPECT_GE(t->snapshot.devices[0].events.size(), o.events);
    auto bytes = traces::writeSnapshotBytes(t->snapshot);
    ASSERT_TRUE(bytes.ok()) << bytes.message();
    auto back = traces::readSnapshotBytes(*bytes, "synth");
    ASSERT_TRUE(back.ok()) << back.message();
    auto facts = std::make_shared<CaptureFacts>();
    facts->memory_stats = sim::memoryStatsMap(t->final_stats);
    ReplayEnvironment env;
    env.capture = facts;
    ConformanceOptions co;
    co.env = env;
    auto conf = runConformance(*back, 0, co);
    ASSERT_TRUE(conf.ok()) << conf.message();
    EXPECT_TRUE(conf->exact()) << (conf->first_divergence
                                       ? conf->first_divergence->expected + " / " + conf->first_divergence->simulated
                                       : std::string("final state"));
    EXPECT_GT(conf->stats_compared.size(), 30u);

    const auto shared = std::make_shared<const traces::Snapshot>(std::move(*back));
    auto p = prepareTrace(shared, 0, env);
    ASSERT_TRUE(p.ok()) << p.message();
    const EditedProgram prog = flattenProgram(*p, {});
    EXPECT_GT(prog.deferred_frees, 0u);
    EXPECT_EQ(prog.streams.size(), 2u);
    auto r = makeModelBackend()->run(jobFor(*p, prog));
    ASSERT_TRUE(r.ok()) << r.message();
    BackendResult rec = *r;
    rec.events = eventsOf(*shared, shared->devices[0]);
    rec.segments = segmentsOf(*shared, 0);
    rec.final_stats = t->final_stats;
    const auto c = compareResults(*r, rec);
    EXPECT_TRUE(c.exact()) << (c.first_difference ? c.first_difference->expected + " / " + c.first_difference->got
                                                  : std::string("layout or statistics"));
  }
}

TEST(Synth, IsDeterministicForASeed) {
  SynthOptions o;
  o.events = 5000;
  o.seed = 11;
  auto a = synthesizeTrace(o), b = synthesizeTrace(o);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->snapshot.devices[0].events.size(), b->snapshot.devices[0].events.size());
  for (std::size_t i = 0; i < a->snapshot.devices[0].events.size(); ++i)
    ASSERT_EQ(a->snapshot.devices[0].events[i].size, b->snapshot.devices[0].events[i].size);
}

// A device that refuses what would exceed a capacity: the driver side of a backend, on the CPU.
class SmallDevice final : public sim::DeviceModel {
 public:
  explicit SmallDevice(sim::ByteCount cap, CompletionSchedule& s) : cap_(cap), schedule_(s) {}
  [[nodiscard]] sim::ByteCount totalMemory() const override { return kH200TotalMemory; }
  std::optional<sim::Addr> cudaMalloc(sim::ByteCount size, sim::StreamId) override {
    if (used_ + size > cap_) {
      ++refused;
      return std::nullopt;
    }
    used_ += size;
    next_ -= (size + (2u << 20) - 1) / (2u << 20) * (2u << 20);
    return next_;
  }
  void cudaFree(sim::Addr, sim::ByteCount size) override { used_ -= size; }
  sim::Addr reserveAddress(sim::ByteCount size, sim::ByteCount, sim::StreamId) override { return next_ -= size; }
  void releaseAddress(sim::Addr, sim::ByteCount) override {}
  bool mapPages(sim::Addr, sim::ByteCount size, sim::StreamId) override {
    if (used_ + size > cap_) return false;
    used_ += size;
    return true;
  }
  void unmapPages(sim::Addr, sim::ByteCount size) override { used_ -= size; }
  sim::ByteCount deviceFree() override { return cap_ - used_; }
  void pollEvents(std::span<const sim::OutstandingEvent> o, std::vector<std::size_t>& c) override {
    schedule_.poll(o, c);
  }
  void syncOrder(std::span<const sim::OutstandingEvent> o, std::vector<std::size_t>& c) override {
    schedule_.syncOrder(o, c);
  }
  std::size_t refused = 0;

 private:
  sim::ByteCount cap_;
  CompletionSchedule& schedule_;
  sim::ByteCount used_ = 0;
  sim::Addr next_ = 0x7f0000000000ull;
};

TEST(RunModel, ADriverThatRefusesGivesTheModelsOutOfMemory) {
  SynthOptions o;
  o.events = 20'000;
  o.seed = 5;
  o.budget = 6ull << 30;
  const auto s = synthProgram(o);
  ASSERT_TRUE(s);
  const EditedProgram& prog = s->program;
  ReplayJob job = jobFor(s->prepared, prog);
  job.usable = 2ull << 30;
  CompletionSchedule schedule(prog);
  SmallDevice dev(*job.usable, schedule);
  const BackendResult real = runModel(job, dev, schedule);
  auto predicted = makeModelBackend()->run(job);
  ASSERT_TRUE(predicted.ok());
  EXPECT_GT(dev.refused, 0u);
  EXPECT_EQ(real.ooms, predicted->ooms);
  EXPECT_GT(real.ooms, 0u);
  EXPECT_LE(real.peak_reserved.bytes, static_cast<std::int64_t>(*job.usable));
}

// --- the op driver

// A target that records what the driver asks of it; every third malloc fails.
class CountingTarget final : public OpTarget {
 public:
  void before(std::size_t index, const BackendOp&) override { befores.push_back(index); }
  bool allocate(const BackendOp&) override { return ++mallocs % 3 != 0; }
  void deallocate(const BackendOp&) override { ++frees; }
  void emptyCache(std::size_t, const BackendOp&) override { ++empty_caches; }
  void resetPeaks() override { ++resets; }
  Figures read(Reading why) override {
    ++reads[static_cast<std::size_t>(why)];
    return Figures{static_cast<std::int64_t>(mallocs), static_cast<std::int64_t>(frees), 0};
  }
  void after(std::size_t, const BackendOp&) override { ++afters; }
  std::vector<std::size_t> befores;
  std::size_t mallocs = 0, frees = 0, empty_caches = 0, resets = 0, afters = 0;
  std::array<std::size_t, 3> reads{};
};

TEST(OpDriver, DispatchesEveryOpCountsFailedMallocsAndReportsProgress) {
  SynthOptions o;
  o.events = 5000;
  o.seed = 3;
  o.empty_cache_every = 500;
  const auto s = synthProgram(o);
  ASSERT_TRUE(s);
  const EditedProgram& prog = s->program;
  ReplayJob job = jobFor(s->prepared, prog);
  std::vector<std::pair<std::size_t, std::size_t>> progress;
  job.progress = [&](std::size_t d, std::size_t n) { progress.emplace_back(d, n); };
  CountingTarget target;
  CompletionSchedule schedule(prog);
  BackendResult r;
  driveOps(job, schedule, target, /*track_peaks=*/true, r);
  const std::size_t n = prog.ops.size();
  EXPECT_EQ(r.ops_executed, n);
  EXPECT_EQ(target.befores.size(), n);
  EXPECT_EQ(target.afters, n);
  EXPECT_EQ(target.mallocs, prog.mallocs);
  EXPECT_EQ(target.frees, prog.frees);
  EXPECT_EQ(target.empty_caches, prog.empty_caches);
  EXPECT_GT(prog.empty_caches, 0u);
  EXPECT_EQ(r.ooms, prog.mallocs / 3);
  ASSERT_TRUE(r.first_oom);
  EXPECT_EQ(prog.ops[*r.first_oom].kind, BackendOpKind::kMalloc);
  // Peaks after each of the program's own ops (all of them here: no edits).
  EXPECT_EQ(target.reads[static_cast<std::size_t>(OpTarget::Reading::kPeak)], n);
  EXPECT_EQ(r.peak_reserved.bytes, static_cast<std::int64_t>(prog.mallocs));
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back(), std::make_pair(n, n));
  EXPECT_FALSE(r.interrupted);

  // Without peak tracking the driver reads nothing for peaks.
  CountingTarget quiet;
  BackendResult q;
  driveOps(job, schedule, quiet, /*track_peaks=*/false, q);
  EXPECT_EQ(quiet.reads[static_cast<std::size_t>(OpTarget::Reading::kPeak)], 0u);
  EXPECT_EQ(q.peak_reserved.op, kNoOp);

  // Cancelled before the first op: nothing runs, and the result says so.
  std::atomic<bool> cancel{true};
  job.cancel = &cancel;
  CountingTarget stopped;
  BackendResult cut;
  driveOps(job, schedule, stopped, true, cut);
  EXPECT_TRUE(cut.interrupted);
  EXPECT_EQ(cut.ops_executed, 0u);
  EXPECT_EQ(stopped.mallocs, 0u);
  ASSERT_FALSE(cut.notes.empty());
  EXPECT_NE(cut.notes[0].find("interrupted after 0 of"), std::string::npos);
}

// --- the replay job

// The model under another name: a backend the job runs and compares like a real one.
class RenamedModel final : public ReplayBackend {
 public:
  explicit RenamedModel(std::string name) : name_(std::move(name)) {}
  [[nodiscard]] std::string name() const override { return name_; }
  Expected<BackendResult> run(const ReplayJob& job) override {
    ++runs;
    return makeModelBackend()->run(job);
  }
  int runs = 0;

 private:
  std::string name_;
};

TEST(BackendReplay, TheJobRunsEachBackendAndComparesItWithThePrediction) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  auto l = load(test::sharedTrace("resume-tiny/resume-main.rank0.pickle"));
  ASSERT_TRUE(l);
  WhatIfOptions w;
  w.edits.push_back(*parseCleanup("after:state_dict_loader.py:load"));
  w.edits.push_back(*parseProbe("after:state_dict_loader.py:load"));
  auto es = resolveEdits(l->prepared, w.edits);
  ASSERT_TRUE(es.ok()) << es.message();
  auto run = chooseEditedRunAsWhatIf(l->prepared, w);
  ASSERT_TRUE(run.ok()) << run.message();

  std::vector<std::unique_ptr<ReplayBackend>> backends;
  backends.push_back(makeModelBackend());  // skipped: the prediction is always made
  backends.push_back(std::make_unique<RenamedModel>("cuda"));
  backends.push_back(std::make_unique<RenamedModel>("other"));
  std::vector<std::string> stages;
  BackendReplayOptions o;
  o.progress = [&](const std::string& stage, std::size_t, std::size_t) {
    if (stages.empty() || stages.back() != stage) stages.push_back(stage);
  };
  auto report = runBackendReplay(l->prepared, *es, *run, backends, o);
  ASSERT_TRUE(report.ok()) << report.message();

  ReplayJob as_run;
  as_run.config = run->config;
  as_run.fraction = run->fraction;
  as_run.usable = run->usable;
  const RunResult engine = engineRun(l->prepared, *es, as_run);
  EXPECT_EQ(report->model.peak_reserved.bytes, engine.peak_reserved.bytes);
  EXPECT_EQ(report->model.final_reserved, engine.final_reserved);
  ASSERT_EQ(report->model.probes.size(), engine.probes.size());
  EXPECT_EQ(report->program.cleanups, es->at(0).gaps.size());
  ASSERT_EQ(report->runs.size(), 2u);
  EXPECT_EQ(report->runs[0].name, "cuda");
  EXPECT_EQ(report->runs[1].name, "other");
  for (const auto& r : report->runs) {
    EXPECT_TRUE(r.vs_model.exact()) << r.name;
    EXPECT_GT(r.vs_model.events_compared, 100u);
  }
  // The cuda backend with edits also runs the unedited program (the time price), the other not.
  EXPECT_TRUE(report->runs[0].baseline);
  EXPECT_FALSE(report->runs[1].baseline);
  EXPECT_EQ(dynamic_cast<RenamedModel&>(*backends[1]).runs, 2);
  EXPECT_EQ(report->runs[0].baseline->peak_reserved.bytes, l->prepared.recorded_peak_reserved);
  EXPECT_TRUE(report->exact);
  EXPECT_EQ(stages, (std::vector<std::string>{"model", "cuda replay", "other replay"}));

  // Stopped (SIGINT in the CLI): the job says which backend was interrupted.
  std::atomic<bool> cancel{true};
  o.cancel = &cancel;
  auto stopped = runBackendReplay(l->prepared, *es, *run, backends, o);
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.message(), "cuda: interrupted (everything it held was given back)");
}

TEST(BackendReplay, TheEditedRunIsChosenAsWhatIfChoosesIt) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  auto l = load(test::sharedTrace("resume-tiny/resume-main.rank0.pickle"));
  ASSERT_TRUE(l);
  WhatIfOptions w;
  auto plain = chooseEditedRunAsWhatIf(l->prepared, w);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->usable);  // no recorded oom in this trace
  EXPECT_EQ(plain->capacity_source.rfind("unlimited", 0), 0u) << plain->capacity_source;
  EXPECT_EQ(plain->fraction, l->prepared.fraction);
  w.capacity = 20ull << 30;
  w.overhead = 1ull << 30;
  w.fraction = 0.5;
  w.settings = *sim::parseAllocConf("expandable_segments:True");
  auto c = chooseEditedRunAsWhatIf(l->prepared, w);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->usable, std::optional<sim::ByteCount>(19ull << 30));
  EXPECT_EQ(c->capacity_source, chooseEditedRun(l->prepared, w)->capacity_source);  // the one rule
  EXPECT_EQ(c->fraction, 0.5);
  EXPECT_TRUE(c->config.expandable_segments);
  w.capacity.reset();
  auto o = chooseEditedRunAsWhatIf(l->prepared, w);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->usable, std::optional<sim::ByteCount>(l->prepared.total_memory - (1ull << 30)));
}

// `reservoir replay --backend model` is the job plus a printer: the figures it prints are the job's.
TEST(BackendReplay, TheCommandPrintsTheJobsReport) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  const std::string trace = test::sharedTrace("resume-tiny/resume-main.rank0.pickle").string();
  auto l = load(trace);
  ASSERT_TRUE(l);
  const auto res = test::runReservoir({"replay", trace, "--backend", "model", "--json"});
  ASSERT_EQ(res.code, 0) << res.err;
  const auto j = nlohmann::json::parse(res.out);
  EXPECT_TRUE(j["exact"].get<bool>());
  EXPECT_EQ(j["model"]["peak_reserved"].get<std::int64_t>(), l->prepared.recorded_peak_reserved);
  EXPECT_EQ(j["program"]["requests"].get<std::size_t>(), flattenProgram(l->prepared, {}).requests());
  EXPECT_TRUE(j["backends"].empty());
  const auto text = test::runReservoir({"replay", trace, "--backend", "model"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("model (prediction):"), std::string::npos);
  EXPECT_NE(text.out.rfind("EXACT (every figure equals the prediction"), std::string::npos);
  const auto bad = test::runReservoir({"replay", trace, "--backend", "tpu"});
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("unknown backend 'tpu'"), std::string::npos);
}

TEST(Backends, MissingGpuBackendsSayWhy) {
  const auto names = registeredBackends();
  if (std::find(names.begin(), names.end(), "torch") == names.end()) {
    auto b = makeBackend("torch");
    ASSERT_FALSE(b.ok());
    EXPECT_NE(b.message().find("no torch backend"), std::string::npos);
  }
  EXPECT_TRUE(makeBackend("model").ok());
  EXPECT_FALSE(makeBackend("tpu").ok());
}

}  // namespace
}  // namespace reservoir::replay
