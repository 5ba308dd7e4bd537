// Stage 2 of a TraceSession (the model) and the session's worker thread.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "reservoir/replay/peak_explain.h"
#include "reservoir/replay/session.h"

namespace reservoir::replay {

WindowStartBlocks windowStartBlocks(const LoadStage& loaded, const ModelStage& model) {
  WindowStartBlocks w;
  for (const auto& seg : model.prepared.program.seed)
    for (const auto& b : seg.blocks)
      if (!b.pending) {
        w.bytes += static_cast<std::int64_t>(b.size);
        ++w.blocks;
      }
  const AllocationLifetimes& l = loaded.lifetimes;
  for (std::size_t a = 0; a < l.count(); ++a)
    if (l.beforeWindow(a)) {
      w.freed_bytes += static_cast<std::int64_t>(l.size(a));
      ++w.freed_blocks;
    }
  return w;
}

std::uint32_t ModelStage::opAtOrBefore(std::uint32_t event) const {
  const std::size_t after = opEvents().upperBound(event);
  if (after == 0) return kNoOp;
  return static_cast<std::uint32_t>(after - 1);
}

std::vector<sim::SegmentView> ModelStage::stateAtEvent(std::uint32_t event) const {
  return index->segmentsAfterOp(opAtOrBefore(event));
}

PeakAnalysis cacheAtEvent(const ModelStage& stage, std::uint32_t event) {
  const std::uint32_t op = stage.opAtOrBefore(event);
  const bool before_first = op == kNoOp || op >= stage.reserved.size();
  const std::int64_t reserved =
      before_first ? startValue(stage.prepared, PeakQuantity::kReserved) : stage.reserved[op];
  const std::int64_t allocated =
      before_first ? startValue(stage.prepared, PeakQuantity::kAllocated) : stage.allocated[op];
  const auto segments = stage.stateAtEvent(event);
  return analyzeCache(segments, stage.prepared.recorded_config, reserved, allocated, [&](std::uint64_t tag) {
    return tag == 0 ? StackId(0) : stage.prepared.allocationStack(tag - 1);
  });
}

std::uint32_t checkpointSpacing(std::size_t ops, std::uint32_t every) {
  const std::size_t spread = (ops + kMaxModelCheckpoints - 1) / kMaxModelCheckpoints;
  return static_cast<std::uint32_t>(std::max<std::size_t>(std::max<std::uint32_t>(every, 1), spread));
}

Expected<std::unique_ptr<ModelStage>> buildModelStage(const LoadStage& loaded, std::uint32_t every,
                                                      const std::atomic<bool>* cancel,
                                                      std::function<void(std::size_t, std::size_t)> progress) {
  auto m = std::make_unique<ModelStage>();
  m->trace = loaded.trace;
  // The load stage's request stream: the replay builds no second one (293 MB at 20 M events).
  auto prepared = prepareTrace(loaded.trace.snapshot, loaded.device_index, loaded.environment(), cancel,
                               loaded.lifetimes.sharedStream());
  if (!prepared) return prepared.status();
  m->prepared = std::move(*prepared);
  if (cancel && cancel->load()) return Status::error("cancelled");
  every = checkpointSpacing(m->prepared.program.ops.size(), every);
  RunSettings rs;
  rs.config = m->prepared.recorded_config;
  rs.fraction = m->prepared.fraction;
  rs.compare_with_recording = true;
  // One replay gives the checkpoints, the run's figures and the per-op curves (taken from the
  // runner before each checkpoint is copied, so no checkpoint holds the curves so far).
  rs.keep_curves = true;
  m->index =
      std::make_unique<StateIndex>(m->prepared, std::vector<ResolvedEdit>{}, rs, every, cancel, std::move(progress));
  if (m->index->cancelled()) return Status::error("cancelled");
  m->run = m->index->result();
  OpCurves curves = m->index->takeCurves();
  m->reserved = std::move(curves.reserved);
  m->allocated = std::move(curves.allocated);
  m->active = std::move(curves.active);
  m->graph = std::make_unique<CallGraph>(loaded.snapshot(), loaded.device_index);
  return m;
}

void releaseFreedMemory() {
#if defined(__GLIBC__)
  // The reader and the conformance replay free much of what they used; give it back.
  malloc_trim(0);
#endif
}

TraceSession::TraceSession(std::string path, SessionCallbacks callbacks, std::optional<std::size_t> device)
    : path_(std::move(path)), callbacks_(std::move(callbacks)), device_(device) {}

TraceSession::~TraceSession() {
  cancel();
  wait();
}

void TraceSession::start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
}

void TraceSession::cancel() { cancel_.store(true); }

void TraceSession::wait() {
  if (thread_.joinable()) thread_.join();
}

namespace {

// Calls `fn` at most every 30 ms (and always for the last step).
class Throttle {
 public:
  explicit Throttle(std::function<void(SessionStage, std::uint64_t, std::uint64_t)> fn, SessionStage stage)
      : fn_(std::move(fn)), stage_(stage) {}
  void operator()(std::uint64_t done, std::uint64_t total) {
    if (!fn_) return;
    const auto now = std::chrono::steady_clock::now();
    if (done < total && now - last_ < std::chrono::milliseconds(30)) return;
    last_ = now;
    fn_(stage_, done, total);
  }

 private:
  std::function<void(SessionStage, std::uint64_t, std::uint64_t)> fn_;
  SessionStage stage_;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace

void TraceSession::run() {
  auto fail = [this](const Status& why) {
    if (callbacks_.failed) callbacks_.failed(why);
  };
  Throttle reading(callbacks_.progress, SessionStage::kReading);
  auto loaded = loadTraceFile(path_, device_, &cancel_, [&](std::uint64_t d, std::uint64_t t) { reading(d, t); });
  if (!loaded) return fail(loaded.status());
  std::shared_ptr<const LoadStage> shared = std::move(*loaded);
  releaseFreedMemory();
  if (callbacks_.loaded) callbacks_.loaded(shared);
  if (cancel_.load()) return fail(Status::error("cancelled"));
  Throttle modelling(callbacks_.progress, SessionStage::kModelling);
  auto model = buildModelStage(*shared, kDefaultCheckpointEvery, &cancel_,
                               [&](std::size_t d, std::size_t t) { modelling(d, t); });
  if (!model) return fail(model.status().prefixed(shared->path() + ": "));
  releaseFreedMemory();
  if (callbacks_.modelled) callbacks_.modelled(std::shared_ptr<const ModelStage>(std::move(*model)));
  if (callbacks_.progress) callbacks_.progress(SessionStage::kDone, 1, 1);
}

}  // namespace reservoir::replay
