// The replay backends' CPU side: the edited program (flattening), the model backend against the
// what-if engine and the recording, the comparison of two runs, the synthetic traces, and the
// driver logic with a fake device. The GPU backends run in tests/gpu (label "gpu").
#include <gtest/gtest.h>

#include <optional>

#include "reservoir/replay/backend.h"
#include "reservoir/replay/edited_program.h"
#include "reservoir/replay/whatif.h"
#include "reservoir/traces/reader.h"
#include "reservoir/traces/writer.h"
#include "test_paths.h"

namespace reservoir::replay {
namespace {

struct Loaded {
  traces::Snapshot snapshot;
  std::optional<CaptureFacts> capture;
  PreparedTrace prepared;
};

std::unique_ptr<Loaded> load(const std::filesystem::path& path) {
  auto snap = traces::readSnapshotFile(path.string());
  EXPECT_TRUE(snap.ok()) << snap.message();
  if (!snap) return nullptr;
  auto l = std::make_unique<Loaded>();
  l->snapshot = std::move(*snap);
  l->capture = findCaptureFacts(path.string());
  ReplayEnvironment env;
  if (l->capture) env.capture = &*l->capture;
  auto p = prepareTrace(l->snapshot, l->snapshot.busiestDevice(), env);
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

// The recording as a backend result (its events and final layout; figures from `like`).
BackendResult recordingAsResult(const Loaded& l, const BackendResult& like) {
  BackendResult r = like;
  const auto& trace = l.snapshot.devices[l.prepared.device_index];
  r.events = eventsOf(trace);
  r.segments = segmentsOf(l.snapshot, trace.device);
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
  const std::uint32_t next_op = l->prepared.program.at_boundary[g.boundary];
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
    RunSettings rs;
    rs.config = l->prepared.recorded_config;
    rs.fraction = l->prepared.fraction;
    rs.usable = l->prepared.derived_capacity;
    const RunResult engine = replayProgram(l->prepared, {}, rs);
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
      RunSettings rs;
      rs.config = l->prepared.recorded_config;
      rs.fraction = l->prepared.fraction;
      rs.usable = l->prepared.derived_capacity;
      const RunResult engine = replayProgram(l->prepared, *es, rs);
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
    CaptureFacts facts;
    facts.memory_stats = sim::memoryStatsMap(t->final_stats);
    ReplayEnvironment env;
    env.capture = &facts;
    ConformanceOptions co;
    co.env = env;
    auto conf = runConformance(*back, 0, co);
    ASSERT_TRUE(conf.ok()) << conf.message();
    EXPECT_TRUE(conf->exact()) << (conf->first_divergence
                                       ? conf->first_divergence->expected + " / " + conf->first_divergence->simulated
                                       : std::string("final state"));
    EXPECT_GT(conf->stats_compared.size(), 30u);

    auto p = prepareTrace(*back, 0, env);
    ASSERT_TRUE(p.ok()) << p.message();
    const EditedProgram prog = flattenProgram(*p, {});
    EXPECT_GT(prog.deferred_frees, 0u);
    EXPECT_EQ(prog.streams.size(), 2u);
    auto r = makeModelBackend()->run(jobFor(*p, prog));
    ASSERT_TRUE(r.ok()) << r.message();
    BackendResult rec = *r;
    rec.events = eventsOf(back->devices[0]);
    rec.segments = segmentsOf(*back, 0);
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
  auto t = synthesizeTrace(o);
  ASSERT_TRUE(t.ok()) << t.message();
  ReplayEnvironment env;
  auto p = prepareTrace(t->snapshot, 0, env);
  ASSERT_TRUE(p.ok()) << p.message();
  const EditedProgram prog = flattenProgram(*p, {});
  ReplayJob job = jobFor(*p, prog);
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
