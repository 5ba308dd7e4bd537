// The model backend: an edited program through the allocator model, with the what-if
// device (recorded or driver-like addresses, a capacity, record_stream completions from the
// recording) or any other DeviceModel a GPU backend brings. Also the backend registry.
#include "reservoir/replay/backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>

#include "reservoir/replay/plugins.h"
#include "util/model_malloc.h"
#include "whatif/device_models.h"

namespace reservoir::replay {

// --- completion schedule

CompletionSchedule::CompletionSchedule(const EditedProgram& program) {
  for (const BackendOp& op : program.ops) {
    if (op.kind != BackendOpKind::kFree || !op.deferred || op.alloc == kNoAllocation) continue;
    if (completes_at_.size() <= op.alloc) completes_at_.resize(op.alloc + 1u, kNoOp);
    completes_at_[op.alloc] = op.completes_at;
  }
}

std::uint32_t CompletionSchedule::completionOf(std::uint64_t tag) const {
  if (tag == 0 || tag - 1 >= completes_at_.size()) return kNoOp;
  return completes_at_[tag - 1];
}

bool CompletionSchedule::complete(std::uint64_t tag) const {
  const std::uint32_t at = completionOf(tag);
  return at != kNoOp && at <= current_;
}

void CompletionSchedule::poll(std::span<const sim::OutstandingEvent> outstanding,
                              std::vector<std::size_t>& completed) const {
  // Per stream, in order, until the first event whose work is not done (CUDA events complete
  // in stream order): what WhatIfDevice::pollEvents does.
  std::vector<sim::StreamId> blocked;
  for (std::size_t i = 0; i < outstanding.size(); ++i) {
    const auto& ev = outstanding[i];
    if (std::find(blocked.begin(), blocked.end(), ev.stream) != blocked.end()) continue;
    if (complete(ev.tag))
      completed.push_back(i);
    else
      blocked.push_back(ev.stream);
  }
}

void CompletionSchedule::syncOrder(std::span<const sim::OutstandingEvent> outstanding,
                                   std::vector<std::size_t>& order) const {
  for (std::size_t i = 0; i < outstanding.size(); ++i) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return completionOf(outstanding[a].tag) < completionOf(outstanding[b].tag);
  });
}

// --- running the model

namespace {

class EventRecorder final : public sim::EventSink {
 public:
  explicit EventRecorder(std::vector<BackendEvent>* out) : out_(out) {}
  void onEvent(const sim::SimEvent& e) override {
    if (out_) out_->push_back(BackendEvent{e.action, e.addr, e.size, e.stream});
  }

 private:
  std::vector<BackendEvent>* out_;
};

// Each op through the allocator model (and the hooks a GPU backend adds around it).
class ModelTarget final : public OpTarget {
 public:
  ModelTarget(sim::CachingAllocator& model, const ModelRunHooks& hooks) : model_(model), hooks_(hooks) {}

  // The seeded blocks that are allocations of the program (ring-buffer traces).
  void seed(const EditedProgram& prog, BackendResult& r) {
    for (const auto& s : prog.seed) r.seed_segments.emplace_back(s.addr, s.size);
    if (prog.seed.empty()) return;
    auto seeded = model_.seed(prog.seed);
    if (!seeded) {
      r.notes.push_back("seed: " + seeded.message());
      return;
    }
    for (std::size_t i = 0; i < seeded->size() && i < prog.seed_allocations.size(); ++i)
      if (prog.seed_allocations[i] != kNoAllocation && model_.isAllocated((*seeded)[i]))
        handles_[prog.seed_allocations[i]] = (*seeded)[i];
  }

  void before(std::size_t index, const BackendOp& op) override {
    if (hooks_.before) hooks_.before(index, op, model_);
  }
  void after(std::size_t index, const BackendOp& op) override {
    if (hooks_.after) hooks_.after(index, op, model_);
  }

  bool allocate(const BackendOp& op) override {
    const std::uint64_t tag = op.alloc != kNoAllocation ? op.alloc + 1u : 0u;
    const auto res = detail::modelMalloc(model_, op.size, op.stream, tag, op.pool, op.restore_at);
    if (!res.ok()) return false;
    if (op.alloc != kNoAllocation) handles_[op.alloc] = res.block;
    return true;
  }

  void deallocate(const BackendOp& op) override {
    const auto it = handles_.find(op.alloc);
    if (it == handles_.end()) return;  // its malloc failed, or released earlier
    if (op.deferred) model_.recordStream(it->second, kRecordStreamUse);
    model_.free(it->second);
    handles_.erase(it);
  }

  void emptyCache(std::size_t, const BackendOp& op) override { detail::modelEmptyCache(model_, op.pool, op.pool_only); }
  void resetPeaks() override { model_.resetPeakStats(); }

  Figures read(Reading) override {
    const sim::StatTotals t = model_.totals();
    return Figures{t.reserved, t.allocated, t.active};
  }

 private:
  sim::CachingAllocator& model_;
  const ModelRunHooks& hooks_;
  std::unordered_map<std::uint32_t, sim::BlockHandle> handles_;
};

}  // namespace

BackendResult runModel(const ReplayJob& job, sim::DeviceModel& device, CompletionSchedule& schedule,
                       const ModelRunHooks& hooks) {
  const EditedProgram& prog = *job.program;
  BackendResult r;
  r.backend = "model";
  EventRecorder sink(job.record_events ? &r.events : nullptr);
  sim::CachingAllocator model(job.config, &device, job.record_events ? &sink : nullptr);
  if (job.fraction < 1.0) model.setMemoryFraction(job.fraction);
  for (const auto& pool : prog.private_pools) model.createPool(pool);
  ModelTarget target(model, hooks);
  target.seed(prog, r);
  driveOps(job, schedule, target, /*track_peaks=*/true, r);
  const sim::StatTotals end = model.totals();
  r.final_reserved = end.reserved;
  r.final_allocated = end.allocated;
  r.final_stats = model.stats();
  r.stats_known = true;
  r.segments = model.segments();
  if (!model.invariantFailure().empty()) r.notes.push_back("model invariant: " + model.invariantFailure());
  const double busy = r.timing.wall_seconds - r.timing.overhead_seconds;
  r.timing.requests_per_second = busy > 0 ? static_cast<double>(prog.requests()) / busy : 0;
  return r;
}

namespace {

// The what-if device, with its completion model driven by the edited program's ops.
class ModelBackend final : public ReplayBackend {
 public:
  [[nodiscard]] std::string name() const override { return "model"; }
  Expected<BackendResult> run(const ReplayJob& job) override {
    if (!job.prepared || !job.program) return Status::error("model backend: no program");
    detail::WhatIfDevice device(*job.prepared, job.address_model, job.usable);
    CompletionSchedule schedule(*job.program);
    ModelRunHooks hooks;
    hooks.before = [&](std::size_t, const BackendOp& op, const sim::CachingAllocator&) {
      if (op.op != kNoOp) device.setCurrentOp(op.op);
    };
    BackendResult r = runModel(job, device, schedule, hooks);
    r.backend = "model";
    return r;
  }
};

std::mutex& registryMutex() {
  static std::mutex m;
  return m;
}

std::map<std::string, BackendFactory>& registry() {
  static std::map<std::string, BackendFactory> r;
  return r;
}

}  // namespace

std::unique_ptr<ReplayBackend> makeModelBackend() { return std::make_unique<ModelBackend>(); }

void registerBackend(const std::string& name, BackendFactory factory) {
  const std::lock_guard<std::mutex> lock(registryMutex());
  registry()[name] = factory;
}

namespace {

// What a GPU backend needs, in the words of a user who has to install it.
std::string needsOf(std::string_view name) {
  if (name == "torch") return "LibTorch with CUDA (libtorch_cuda.so, libc10_cuda.so)";
  return "the CUDA runtime (libcudart.so)";
}

// A GPU backend from its plugin (plugins.h): loaded once, kept for the process.
Expected<std::unique_ptr<ReplayBackend>> backendFromPlugin(std::string_view name) {
  PluginProblem why = PluginProblem::kNone;
  auto plugin = loadPlugin(backendPluginFile(std::string(name)), kBackendPluginEntry, false, &why);
  if (!plugin) {
    if (why == PluginProblem::kNotFound)
      return Status::usage(fmt::format("this build has no {} backend: {}; reservoir builds it where {} is found", name,
                                       plugin.message(), needsOf(name)));
    return Status::usage(fmt::format("the {} backend cannot start on this machine: it needs {} ({})", name,
                                     needsOf(name), plugin.message()));
  }
  using Make = ReplayBackend* (*)();
  std::unique_ptr<ReplayBackend> backend(reinterpret_cast<Make>(plugin->symbol)());
  if (!backend) return Status::usage(fmt::format("the {} backend ({}) could not start", name, plugin->file));
  return backend;
}

}  // namespace

Expected<std::unique_ptr<ReplayBackend>> makeBackend(std::string_view name) {
  if (name == "model") return makeModelBackend();
  {
    const std::lock_guard<std::mutex> lock(registryMutex());
    const auto it = registry().find(std::string(name));
    if (it != registry().end()) return it->second();
  }
  if (name == "torch" || name == "cuda") return backendFromPlugin(name);
  return Status::usage(fmt::format("unknown backend '{}' (model, torch, cuda)", name));
}

std::vector<std::string> registeredBackends() {
  std::vector<std::string> out{"model"};
  const std::lock_guard<std::mutex> lock(registryMutex());
  for (const auto& [name, f] : registry()) out.push_back(name);
  return out;
}

}  // namespace reservoir::replay
