// The replay job: the model's prediction (cross-checked with the what-if engine), then each
// backend's run of the same edited program, compared with it (see backend_replay.h).
#include "reservoir/replay/backend_replay.h"
#include "reservoir/replay/edited_run.h"

#include <fmt/format.h>

#include "reservoir/replay/capture_facts.h"
#include "reservoir/replay/recording_pools.h"
#include "reservoir/traces/reader.h"

namespace reservoir::replay {

Expected<EditedRunChoice> chooseEditedRunAsWhatIf(const PreparedTrace& p, const WhatIfOptions& w) {
  EditedRunChoice c;
  auto chosen = chooseEditedRun(p, w);  // the one rule whatif, sweep, gate and export use
  if (!chosen) return chosen.status();
  static_cast<EditedRun&>(c) = std::move(*chosen);
  c.given_capacity = w.capacity;
  c.overhead = w.overhead;
  c.address_model = w.address_model;
  return c;
}

namespace {

std::size_t opIndexOf(const EditedProgram& prog, std::uint32_t program_op) {
  for (std::size_t i = 0; i < prog.ops.size(); ++i)
    if (prog.ops[i].op == program_op) return i;
  return prog.ops.size();
}

std::optional<std::size_t> peakIndex(const EditedProgram& prog, const BackendResult& prediction) {
  if (prediction.peak_reserved.op == kNoOp) return std::nullopt;
  return opIndexOf(prog, prediction.peak_reserved.op);
}

// Everything one job's runs share: the trace, the edits, the base job, the predictions.
struct JobContext {
  const PreparedTrace& prepared;
  const std::vector<ResolvedEdit>& edits;
  const BackendReplayOptions& options;
  ReplayJob job;
  BackendReplayReport report;
  // A real allocator starts empty: a ring-buffer trace's window is replayed without the start
  // state rebuilt for it, and compared with the model's prediction for the same.
  std::optional<EditedProgram> unseeded;
  std::optional<BackendResult> unseeded_model;
};

std::function<void(std::size_t, std::size_t)> stageProgress(const BackendReplayOptions& o, const std::string& stage) {
  if (!o.progress) return {};
  return [&o, stage](std::size_t done, std::size_t total) { o.progress(stage, done, total); };
}

// The model's prediction, its cross-check with the what-if engine, and the unseeded prediction.
Status predict(JobContext& c, const EditedRunChoice& run) {
  ReplayJob mj = c.job;
  mj.progress = stageProgress(c.options, "model");
  auto r = makeModelBackend()->run(mj);
  if (!r) return Status::error(r.message());
  BackendResult& model = c.report.model;
  model = std::move(*r);
  RunSettings rs = run.edited();
  rs.address_model = run.address_model;
  const RunResult engine = replayProgram(c.prepared, c.edits, rs);
  if (engine.peak_reserved.bytes != model.peak_reserved.bytes || engine.final_reserved != model.final_reserved ||
      engine.peak_allocated.bytes != model.peak_allocated.bytes)
    model.notes.push_back(
        fmt::format("the what-if engine predicts peak reserved {} / final {}: the flattened program "
                    "disagrees with it",
                    engine.peak_reserved.bytes, engine.final_reserved));
  c.job.measure_at = peakIndex(c.report.program, model);
  if (c.report.program.seed.empty()) return {};
  c.unseeded = c.report.program.withoutSeed();
  ReplayJob uj = c.job;
  uj.program = &*c.unseeded;
  auto u = makeModelBackend()->run(uj);
  if (!u) return Status::error(u.message());
  c.unseeded_model = std::move(*u);
  return {};
}

// The model on a real allocator's own recording (torch): does it reproduce what really happened?
void checkOwnRecording(const JobContext& c, const EditedProgram& ran, BackendRun& run, bool& exact) {
  auto snap = traces::readSnapshotBytes(run.result.snapshot_bytes, run.name + " recording");
  if (!snap || !snap->findDevice(0)) return;
  CaptureFacts facts;
  facts.memory_stats = sim::memoryStatsMap(run.result.final_stats);
  facts.device_total = run.result.memory.total;
  ConformanceOptions co;
  co.env.capture = std::make_shared<const CaptureFacts>(std::move(facts));
  co.env.fraction = c.job.fraction < 1.0 ? std::optional<double>(c.job.fraction) : std::nullopt;
  co.env.total_memory = c.prepared.total_memory;
  co.find_missing_fraction = false;  // the fraction this run was given is known
  std::size_t index = 0;
  for (std::size_t i = 0; i < snap->devices.size(); ++i)
    if (snap->devices[i].device == 0) index = i;
  // Its entries carry no stacks: an oom in a private pool is routed by the pool the backend ran it in.
  const RecordedPoolsAnnotation pools = annotateRecordedPools(*snap, index, ran);
  if (!ran.private_pools.empty() && !pools.applied && pools.entries != pools.mallocs)
    run.result.notes.push_back(fmt::format(
        "the model on this recording: its {} alloc and oom entries do not pair with the {} requests run, so "
        "its private-pool requests are routed by address alone",
        pools.entries, pools.mallocs));
  auto conf = runConformance(*snap, index, co);
  if (conf) {
    run.own_recording = std::move(*conf);
    exact = exact && run.own_recording->exact();
  } else {
    run.result.notes.push_back("the model on this recording: " + conf.message());
  }
}

// The cuda backend with edits: the unedited program's run, which prices the edits.
void runBaseline(const JobContext& c, ReplayBackend& impl, const ReplayJob& edited, BackendRun& run) {
  const EditedProgram base_prog = flattenProgram(c.prepared, {});
  ReplayJob base = c.job;
  base.program = &base_prog;
  base.config = c.prepared.recorded_config;
  base.fraction = c.prepared.fraction;
  base.measure_at.reset();
  base.progress = edited.progress;
  auto b = impl.run(base);
  if (b)
    run.baseline = std::move(*b);
  else
    run.result.notes.push_back("baseline timing run: " + b.message());
}

Expected<BackendRun> runOne(JobContext& c, ReplayBackend& impl) {
  const EditedProgram& program = c.report.program;
  BackendRun run;
  run.name = impl.name();
  ReplayJob bj = c.job;
  const bool from_empty = c.unseeded && run.name == "torch";
  if (from_empty) {
    bj.program = &*c.unseeded;
    bj.measure_at = peakIndex(*c.unseeded, *c.unseeded_model);
  }
  bj.progress = stageProgress(c.options, run.name + " replay");
  auto r = impl.run(bj);
  if (!r) return Status::error(r.message());
  run.result = std::move(*r);
  if (run.result.interrupted) return Status::error(run.name + ": interrupted (everything it held was given back)");
  if (from_empty)
    run.result.notes.push_back(fmt::format(
        "the trace starts mid-run: replayed from an empty allocator ({} requests without the {} segments rebuilt "
        "for its start) and compared with the model's prediction for the same (peak reserved {})",
        c.unseeded->requests(), program.seed.size(), c.unseeded_model->peak_reserved.bytes));
  run.vs_model = compareResults(from_empty ? *c.unseeded_model : c.report.model, run.result, bj.program->seed.empty());
  // The verdict: the figures equal the prediction, and (torch) the model reproduces the real
  // allocator's own recording exactly. Decisions can differ from the prediction's where the
  // driver placed segments in another order than the recording (reported, not a failure).
  c.report.exact = c.report.exact && run.vs_model.figuresEqual();
  if (!run.result.snapshot_bytes.empty()) {
    if (c.options.on_recording) c.options.on_recording(run.result, program);
    checkOwnRecording(c, *bj.program, run, c.report.exact);
  }
  if (run.name == "cuda" && !program.edits.empty() && c.options.baseline) runBaseline(c, impl, bj, run);
  return run;
}

}  // namespace

Expected<BackendReplayReport> runBackendReplay(const PreparedTrace& prepared, const std::vector<ResolvedEdit>& edits,
                                               const EditedRunChoice& run,
                                               const std::vector<std::unique_ptr<ReplayBackend>>& backends,
                                               const BackendReplayOptions& options) {
  JobContext c{prepared, edits, options, {}, {}, {}, {}};
  c.report.program = flattenProgram(prepared, edits);
  ReplayJob& job = c.job;
  job.prepared = &prepared;
  job.program = &c.report.program;
  job.config = run.config;
  job.fraction = run.fraction;
  job.capacity = run.given_capacity;
  job.overhead = run.overhead;
  job.usable = run.usable;
  job.address_model = run.address_model;
  job.touch_memory = options.touch_memory;
  job.track_peaks = options.track_peaks;
  job.cancel = options.cancel;
  if (Status st = predict(c, run); !st.ok()) return st;
  for (const auto& impl : backends) {
    if (impl->name() == "model") continue;
    auto r = runOne(c, *impl);
    if (!r) return Status::error(r.message());
    c.report.runs.push_back(std::move(*r));
  }
  return std::move(c.report);
}

}  // namespace reservoir::replay
