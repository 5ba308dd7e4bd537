// The model backend: an edited program through the allocator model, with the what-if
// device (recorded or driver-like addresses, a capacity, record_stream completions from the
// recording) or any other DeviceModel a GPU backend brings. Also the backend registry.
#include "reservoir/replay/backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <unordered_map>

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

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

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

  std::unordered_map<std::uint32_t, sim::BlockHandle> handles;
  for (const auto& s : prog.seed) r.seed_segments.emplace_back(s.addr, s.size);
  if (!prog.seed.empty()) {
    auto seeded = model.seed(prog.seed);
    if (!seeded) {
      r.notes.push_back("seed: " + seeded.message());
    } else {
      for (std::size_t i = 0; i < seeded->size() && i < prog.seed_allocations.size(); ++i)
        if (prog.seed_allocations[i] != kNoAllocation && model.isAllocated((*seeded)[i]))
          handles[prog.seed_allocations[i]] = (*seeded)[i];
    }
  }
  auto reserved = [&] { return model.stats().reserved_bytes[sim::kAggregate].current; };
  auto allocated = [&] { return model.stats().allocated_bytes[sim::kAggregate].current; };

  const std::size_t n = prog.ops.size();
  const std::size_t progress_every = std::max<std::size_t>(1, n / 200);
  const auto t0 = Clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    if (job.cancel && job.cancel->load(std::memory_order_relaxed)) {
      r.notes.push_back(fmt::format("interrupted after {} of {} ops", i, n));
      r.interrupted = true;
      break;
    }
    const BackendOp& op = prog.ops[i];
    if (op.op != kNoOp) schedule.setCurrentOp(op.op);
    if (hooks.before) hooks.before(i, op, model);
    switch (op.kind) {
      case BackendOpKind::kMalloc: {
        if (op.pool) model.beginAllocateToPool(sim::PoolRouting{*op.pool, std::nullopt});
        const std::uint64_t tag = op.alloc != kNoAllocation ? op.alloc + 1u : 0u;
        const auto res = model.malloc(op.size, op.stream, tag);
        if (op.pool) {
          model.endAllocateToPool(*op.pool);
          model.releasePool(*op.pool);
        }
        if (!res.ok()) {
          if (!r.first_oom) r.first_oom = i;
          ++r.ooms;
        } else if (op.alloc != kNoAllocation) {
          handles[op.alloc] = res.block;
        }
        break;
      }
      case BackendOpKind::kFree: {
        const auto it = handles.find(op.alloc);
        if (it == handles.end()) break;  // its malloc failed, or released earlier
        if (op.deferred) model.recordStream(it->second, kRecordStreamUse);
        model.free(it->second);
        handles.erase(it);
        break;
      }
      case BackendOpKind::kEmptyCache:
        model.emptyCache();
        break;
      case BackendOpKind::kProbe:
        r.probes.push_back(Probe{op.edit >= 0 ? prog.edits[static_cast<std::size_t>(op.edit)] : std::string(),
                                 reserved(), allocated(), model.stats().active_bytes[sim::kAggregate].current,
                                 op.boundary});
        break;
      case BackendOpKind::kResetPeaks:
        model.resetPeakStats();
        r.peak_reserved = PeakInfo{};
        r.peak_allocated = PeakInfo{};
        r.peak_reserved.op = r.peak_allocated.op = kNoOp;
        break;
      case BackendOpKind::kDemand: {
        DemandResult d{op.edit >= 0 ? prog.edits[static_cast<std::size_t>(op.edit)] : std::string(), op.size,
                       job.usable.has_value(), true, 0};
        if (job.usable) {
          d.free = static_cast<std::int64_t>(*job.usable) - reserved();
          d.fits = d.free >= static_cast<std::int64_t>(op.size);
        }
        r.demands.push_back(d);
        break;
      }
    }
    if (hooks.after) hooks.after(i, op, model);
    if (op.op != kNoOp) {
      // Peaks after the program's own ops, as the what-if runner tracks them.
      if (reserved() > r.peak_reserved.bytes || r.peak_reserved.op == kNoOp)
        r.peak_reserved = PeakInfo{reserved(), op.op, 0, 0, {}};
      if (allocated() > r.peak_allocated.bytes || r.peak_allocated.op == kNoOp)
        r.peak_allocated = PeakInfo{allocated(), op.op, 0, 0, {}};
    }
    ++r.ops_executed;
    if (job.progress && i % progress_every == 0) job.progress(i, n);
  }
  r.timing.wall_seconds = secondsSince(t0);
  if (job.progress) job.progress(n, n);
  r.final_reserved = reserved();
  r.final_allocated = allocated();
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

Expected<std::unique_ptr<ReplayBackend>> makeBackend(std::string_view name) {
  if (name == "model") return makeModelBackend();
  const std::lock_guard<std::mutex> lock(registryMutex());
  const auto it = registry().find(std::string(name));
  if (it != registry().end()) return it->second();
  if (name == "torch")
    return Status::error(
        "this build has no torch backend (LibTorch with CUDA was not found when it was configured; "
        "configure with CMAKE_PREFIX_PATH=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)'))");
  if (name == "cuda")
    return Status::error("this build has no cuda backend (the CUDA toolkit was not found when it was configured)");
  return Status::error(fmt::format("unknown backend '{}' (model, torch, cuda)", name));
}

std::vector<std::string> registeredBackends() {
  std::vector<std::string> out{"model"};
  const std::lock_guard<std::mutex> lock(registryMutex());
  for (const auto& [name, f] : registry()) out.push_back(name);
  return out;
}

}  // namespace reservoir::replay
