// The `torch` backend: the real allocator. c10's CUDA caching allocator (LibTorch) serves the
// program's requests in the recorded order, on one CUDA stream per recorded stream (created so
// that their handles sort as the recorded ones do: free lists are ordered by stream), with the
// settings applied through the allocator's own settings API and the memory fraction through
// setMemoryFraction. A free the recording shows completing later was record_stream'd: the block
// gets a use on another stream, and the CUDA event the allocator records for it reports "not
// ready" until the op at which the recording retired it (the allocator asks the CUDA runtime
// through cudaEventQuery; this plugin interposes that call, so the GPU's progress follows
// the trace while the allocator's code is untouched). Private pools (MemPool, CUDA-graph pools)
// are the allocator's own, under the recorded ids (createOrIncrefPool), and each request the
// recording made in one is bracketed by beginAllocateToPool / endAllocateToPool, as
// torch.cuda.use_mem_pool does. The allocator records its own history
// (torch::cuda::_record_memory_history) and the run returns it as a snapshot.
#include <c10/core/Allocator.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <torch/csrc/cuda/memory_snapshot.h>

#if __has_include(<c10/core/AllocatorConfig.h>)
#include <c10/core/AllocatorConfig.h>
#define RESERVOIR_ACCELERATOR_ALLOCATOR_CONFIG 1
#endif

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "device_memory.h"
#include "gpu_backends.h"
#include "reservoir/replay/backend.h"
#include "reservoir/traces/reader.h"

// --- the CUDA event interposition: when does record_stream'd work complete?

namespace reservoir::replay::gpu::hook {

struct State {
  std::mutex m;
  bool active = false;
  std::uint64_t tagging = 0;  // the allocation whose record_stream'd free is under way
  const CompletionSchedule* schedule = nullptr;
  std::unordered_map<cudaEvent_t, std::uint64_t> tags;  // event -> allocation tag
  std::unordered_set<std::uint64_t> forced;             // completed by a synchronization
  std::size_t records = 0, held = 0, syncs = 0;
};

State& state() {
  static State s;
  return s;
}

template <typename Fn>
Fn next(const char* name) {
  void* sym = dlsym(RTLD_NEXT, name);
  if (!sym) sym = dlsym(RTLD_DEFAULT, name);
  return reinterpret_cast<Fn>(sym);
}

void noteRecord(cudaEvent_t event) {
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.m);
  if (!s.active) return;
  if (s.tagging != 0) {
    s.tags[event] = s.tagging;
    ++s.records;
  } else {
    s.tags.erase(event);
  }
}

// cudaEventQuery's answer for a record_stream'd free's event: "not ready" until the op at which the
// recording retired it, or a synchronization forced it.
bool holdBack(cudaEvent_t event) {
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.m);
  if (!s.active) return false;
  const auto it = s.tags.find(event);
  if (it == s.tags.end() || s.forced.count(it->second) != 0 || !s.schedule || s.schedule->complete(it->second))
    return false;
  ++s.held;
  return true;
}

// A synchronization on a record_stream'd free's event completes it.
void noteSynchronize(cudaEvent_t event) {
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.m);
  if (!s.active) return;
  const auto it = s.tags.find(event);
  if (it == s.tags.end()) return;
  s.forced.insert(it->second);
  ++s.syncs;
}

}  // namespace reservoir::replay::gpu::hook

// Exported from the plugin (replay/plugin_exports.map): libc10_cuda, loaded as this plugin's
// dependency, finds them before the CUDA runtime's.
#pragma GCC visibility push(default)
extern "C" {

// NOLINTBEGIN(readability-identifier-naming): these are the CUDA runtime's names.
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  using Fn = cudaError_t (*)(cudaEvent_t, cudaStream_t);
  static const Fn real = reservoir::replay::gpu::hook::next<Fn>("cudaEventRecord");
  reservoir::replay::gpu::hook::noteRecord(event);
  return real(event, stream);
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags) {
  using Fn = cudaError_t (*)(cudaEvent_t, cudaStream_t, unsigned int);
  static const Fn real = reservoir::replay::gpu::hook::next<Fn>("cudaEventRecordWithFlags");
  reservoir::replay::gpu::hook::noteRecord(event);
  return real(event, stream, flags);
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  using Fn = cudaError_t (*)(cudaEvent_t);
  static const Fn real = reservoir::replay::gpu::hook::next<Fn>("cudaEventQuery");
  if (reservoir::replay::gpu::hook::holdBack(event)) return cudaErrorNotReady;
  return real(event);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  using Fn = cudaError_t (*)(cudaEvent_t);
  static const Fn real = reservoir::replay::gpu::hook::next<Fn>("cudaEventSynchronize");
  reservoir::replay::gpu::hook::noteSynchronize(event);
  return real(event);
}
// NOLINTEND(readability-identifier-naming)

}  // extern "C"
#pragma GCC visibility pop

namespace reservoir::replay::gpu {
namespace {

namespace cca = c10::cuda::CUDACachingAllocator;
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string cudaText(cudaError_t e) { return fmt::format("{} ({})", cudaGetErrorName(e), cudaGetErrorString(e)); }

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Failure(fmt::format("{}: {}", what, cudaText(e)));
}

template <typename S>
sim::StatArray statArray(const S& a) {
  sim::StatArray out;
  for (std::size_t i = 0; i < out.size() && i < a.size(); ++i) {
    out[i].current = a[i].current;
    out[i].peak = a[i].peak;
    out[i].allocated = a[i].allocated;
    out[i].freed = a[i].freed;
  }
  return out;
}

template <typename S>
sim::Stat stat(const S& a) {
  sim::Stat out;
  out.current = a.current;
  out.peak = a.peak;
  out.allocated = a.allocated;
  out.freed = a.freed;
  return out;
}

// c10's DeviceStats as the model's (the same fields, torch.cuda.memory_stats() names).
template <typename D>
sim::DeviceStats convertStats(const D& s) {
  sim::DeviceStats o;
  o.allocation = statArray(s.allocation);
  o.segment = statArray(s.segment);
  o.active = statArray(s.active);
  o.inactive_split = statArray(s.inactive_split);
  o.allocated_bytes = statArray(s.allocated_bytes);
  o.reserved_bytes = statArray(s.reserved_bytes);
  o.active_bytes = statArray(s.active_bytes);
  o.inactive_split_bytes = statArray(s.inactive_split_bytes);
  o.requested_bytes = statArray(s.requested_bytes);
  o.num_alloc_retries = s.num_alloc_retries;
  o.num_ooms = s.num_ooms;
  o.oversize_allocations = stat(s.oversize_allocations);
  o.oversize_segments = stat(s.oversize_segments);
  if constexpr (requires { s.num_sync_all_streams; }) o.num_sync_all_streams = s.num_sync_all_streams;
  if constexpr (requires { s.num_device_alloc; }) o.num_device_alloc = s.num_device_alloc;
  if constexpr (requires { s.num_device_free; }) o.num_device_free = s.num_device_free;
  o.max_split_size = static_cast<std::int64_t>(s.max_split_size);
  return o;
}

sim::DeviceStats deviceStats() { return convertStats(cca::getDeviceStats(0)); }

void applySettings(const std::string& conf) {
#ifdef RESERVOIR_ACCELERATOR_ALLOCATOR_CONFIG
  c10::CachingAllocator::setAllocatorSettings(conf);
#else
  cca::setAllocatorSettings(conf);
#endif
}

// A private pool's id as the allocator takes it (c10's MempoolId_t: a pair of CaptureId_t).
using MempoolId = std::pair<unsigned long long, unsigned long long>;  // NOLINT(google-runtime-int): c10's type

MempoolId mempoolId(const traces::PoolId& p) {
  // An inferred pool (-1, k) becomes a MemPool id far above those torch hands out (a counter).
  if (p.inferred()) return {0ull, (1ull << 62) + static_cast<unsigned long long>(p.second)};
  return {static_cast<unsigned long long>(p.first), static_cast<unsigned long long>(p.second)};
}

// Which pool an id names: torch.cuda.MemPool() makes (0, n), a CUDA graph's pool (n, 0).
std::string_view poolKind(const traces::PoolId& p) {
  if (p.inferred()) return "pool inferred from the trace (it left no segment at the dump), as a MemPool";
  if (p.first == 0) return "MemPool";
  if (p.second == 0) return "CUDA graph pool";
  return "private pool";
}

// Everything the run holds, given back in the right order however it ends.
struct Holdings {
  cca::CUDAAllocator* alloc = nullptr;
  std::unordered_map<std::uint32_t, void*> live;  // allocation id -> pointer
  std::vector<MempoolId> pools;                   // made here, one reference each
  std::vector<cudaStream_t> streams;
  void* ballast = nullptr;
  bool recording = false;

  Holdings() = default;
  Holdings(const Holdings&) = delete;
  Holdings& operator=(const Holdings&) = delete;
  ~Holdings() { release(); }

  void release() noexcept {
    try {
      if (recording) {
        torch::cuda::_record_memory_history(std::optional<std::string>(), std::optional<std::string>(), "python",
                                            SIZE_MAX, true);
        recording = false;
      }
      if (alloc) {
        for (const auto& [id, p] : live) alloc->raw_delete(p);
        live.clear();
        // The last reference: each pool becomes freeable, and the emptyCache below releases it.
        for (const MempoolId& id : pools) cca::releasePool(0, id);
        pools.clear();
        cca::emptyCache();  // synchronizes what record_stream'd frees still wait for, then releases
      }
    } catch (...) {
    }
    (void)cudaDeviceSynchronize();
    for (cudaStream_t s : streams) (void)cudaStreamDestroy(s);
    streams.clear();
    if (ballast) (void)cudaFree(ballast);
    ballast = nullptr;
    auto& h = hook::state();
    const std::lock_guard<std::mutex> lock(h.m);
    h.active = false;
    h.schedule = nullptr;
    h.tags.clear();
  }
};

// The recorded streams as CUDA streams: one per recorded stream, their handles in the recorded
// order (free lists are ordered by stream); one more for record_stream uses.
struct StreamMap {
  std::unordered_map<sim::StreamId, cudaStream_t> to_real{{0, nullptr}};
  std::unordered_map<std::uint64_t, sim::StreamId> to_recorded{{0, 0}};
  cudaStream_t use_stream = nullptr;

  StreamMap(const EditedProgram& prog, Holdings& hold) {
    std::vector<sim::StreamId> recorded;
    for (const sim::StreamId s : prog.streams)
      if (s != 0) recorded.push_back(s);
    hold.streams.resize(recorded.size() + 1);
    for (auto& s : hold.streams) check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    std::vector<cudaStream_t> sorted = hold.streams;
    std::sort(sorted.begin(), sorted.end(), [](cudaStream_t a, cudaStream_t b) {
      return reinterpret_cast<std::uintptr_t>(a) < reinterpret_cast<std::uintptr_t>(b);
    });
    for (std::size_t i = 0; i < recorded.size(); ++i) {
      to_real[recorded[i]] = sorted[i];
      to_recorded[reinterpret_cast<std::uintptr_t>(sorted[i])] = recorded[i];
    }
    use_stream = sorted.back();
    to_recorded[reinterpret_cast<std::uintptr_t>(use_stream)] = kRecordStreamUse;
  }

  [[nodiscard]] cudaStream_t real(sim::StreamId s) const {
    const auto it = to_real.find(s);
    if (it == to_real.end()) throw Failure(fmt::format("no stream made for recorded stream {}", s));
    return it->second;
  }
  // A stream of the run's own recording as the recorded one.
  void toRecorded(sim::StreamId& s) const {
    const auto it = to_recorded.find(s);
    if (it != to_recorded.end()) s = it->second;
  }
};

// The program's private pools on the real allocator, under the recorded ids: one reference
// each, as torch.cuda.MemPool() holds one for its lifetime, until the program releases the pool
// (an empty_cache op whose route names it: the recording gave its segments back) or the run ends.
void makePools(const EditedProgram& prog, Holdings& hold, BackendResult& r) {
  std::string named;
  for (const traces::PoolId& p : prog.private_pools) {
    if (p.isDefault()) continue;
    if (!p.inferred() && (p.first < 0 || p.second < 0))
      throw Failure(fmt::format("private pool ({},{}): a pool id is two non-negative numbers", p.first, p.second));
    cca::createOrIncrefPool(0, mempoolId(p));
    hold.pools.push_back(mempoolId(p));
    named += fmt::format("{}({},{}) {}", named.empty() ? "" : ", ", p.first, p.second, poolKind(p));
  }
  if (!named.empty())
    r.notes.push_back(fmt::format(
        "private pools on the real allocator: {}; each request the recording made in one ran between "
        "beginAllocateToPool and endAllocateToPool (every stream), and the pools were held to the end",
        named));
}

// One request routed to a private pool, as torch.cuda.use_mem_pool routes it: the allocator's
// captures_underway holds the pool for the request's duration (so, as under a capture, it
// processes no record_stream events and releases no cache on a failed cudaMalloc; the model does
// the same).
class PoolBracket {
 public:
  explicit PoolBracket(const std::optional<traces::PoolId>& pool) {
    if (!pool || pool->isDefault()) return;
    const MempoolId id = mempoolId(*pool);
    cca::beginAllocateToPool(0, id, [](cudaStream_t) { return true; });
    id_ = id;
  }
  PoolBracket(const PoolBracket&) = delete;
  PoolBracket& operator=(const PoolBracket&) = delete;
  ~PoolBracket() {
    if (!id_) return;
    try {
      cca::endAllocateToPool(0, *id_);
      cca::releasePool(0, *id_);  // the reference beginAllocateToPool took
    } catch (...) {
    }
  }

 private:
  std::optional<MempoolId> id_;
};

void startHook(const CompletionSchedule& schedule) {
  auto& h = hook::state();
  const std::lock_guard<std::mutex> lock(h.m);
  h.tags.clear();
  h.forced.clear();
  h.records = h.held = h.syncs = 0;
  h.tagging = 0;
  h.active = true;
  h.schedule = &schedule;
}

void noteHook(const EditedProgram& prog, BackendResult& r) {
  auto& h = hook::state();
  const std::lock_guard<std::mutex> lock(h.m);
  if (prog.deferred_frees > 0 && h.records == 0)
    r.notes.push_back(
        "the CUDA event interposition saw no event: record_stream'd frees completed when the GPU "
        "finished, not where the recording retired them");
  r.notes.push_back(fmt::format("record_stream events: {} recorded, {} queries answered 'not ready', {} synchronized",
                                h.records, h.held, h.syncs));
}

// The fraction, through the allocator's own API (scaled when this device is not the trace's).
void applyFraction(const ReplayJob& job, std::uint64_t total, BackendResult& r) {
  double fraction = job.fraction;
  if (fraction >= 1.0) return;
  if (job.prepared->total_memory != total && total > 0) {
    fraction = fraction * static_cast<double>(job.prepared->total_memory) / static_cast<double>(total);
    r.notes.push_back(fmt::format("this device has {} bytes, the trace's {}: memory fraction {} applied as {}", total,
                                  job.prepared->total_memory, job.fraction, fraction));
  }
  cca::setMemoryFraction(fraction, 0);
}

// A smaller device than this one: hold the rest back, so cudaMalloc fails where it would there.
void holdBallast(const ReplayJob& job, Holdings& hold, BackendResult& r) {
  if (!job.usable) return;
  std::size_t f = 0, t = 0;
  check(cudaMemGetInfo(&f, &t), "cudaMemGetInfo");
  const auto cache_now = static_cast<sim::ByteCount>(deviceStats().reserved_bytes[0].current);
  const sim::ByteCount want_free = *job.usable > cache_now ? *job.usable - cache_now : 0;
  if (f <= want_free) return;
  const sim::ByteCount ballast = (f - want_free) / (2 * sim::kMiB) * (2 * sim::kMiB);
  if (ballast == 0) return;
  check(cudaMalloc(&hold.ballast, ballast), "cudaMalloc (ballast)");
  r.memory.ballast = ballast;
  r.notes.push_back(fmt::format("device limited to {} bytes for the cache: {} bytes held back", *job.usable, ballast));
}

std::int64_t reservedNow() { return cca::getDeviceStats(0).reserved_bytes[0].current; }

// Each op on the real allocator (the op driver, driveOps, runs the loop).
class TorchTarget final : public OpTarget {
 public:
  TorchTarget(const ReplayJob& job, Holdings& hold, const StreamMap& streams, DeviceMemory& mem)
      : job_(job), hold_(hold), streams_(streams), mem_(mem),
        use_c10_(c10::cuda::getStreamFromExternal(streams.use_stream, 0)) {}

  bool allocate(const BackendOp& op) override {
    const PoolBracket bracket(op.pool);
    try {
      void* p = hold_.alloc->raw_alloc_with_stream(op.size, streams_.real(op.stream));
      if (op.alloc != kNoAllocation && p) hold_.live[op.alloc] = p;
    } catch (const c10::OutOfMemoryError&) {
      return false;
    }
    return true;
  }

  void deallocate(const BackendOp& op) override {
    const auto it = hold_.live.find(op.alloc);
    if (it == hold_.live.end()) return;
    void* p = it->second;
    hold_.live.erase(it);
    if (op.deferred)
      freeDeferred(p, op.alloc + 1u);
    else
      hold_.alloc->raw_delete(p);
  }

  void emptyCache(std::size_t i, const BackendOp& op) override {
    const auto tc = Clock::now();
    const std::int64_t before = reservedNow();
    // A pool the recording released just before (its graphs or MemPool dropped): our reference
    // goes, so the pool is freeable; a MemPool's own empty_cache empties that pool alone.
    std::optional<MempoolId> released;
    if (op.pool && !op.pool->isDefault()) released = releaseHeldPool(mempoolId(*op.pool));
    const auto tc1 = Clock::now();
    if (released && op.pool_only)
      cca::emptyCache(*released);
    else
      cca::emptyCache();
    CleanupTiming c;
    c.seconds = since(tc1);
    const std::int64_t after = reservedNow();
    c.index = i;
    c.what = op.edit >= 0 ? job_.program->edits[static_cast<std::size_t>(op.edit)]
                          : fmt::format("recorded empty_cache (op {})", op.op);
    c.released = before - after;
    cleanups.push_back(std::move(c));
    overhead += since(tc) - cleanups.back().seconds;
  }

  void resetPeaks() override { cca::resetPeakStats(0); }

  // Drops the run's reference to pool `id` (made by makePools), once.
  std::optional<MempoolId> releaseHeldPool(const MempoolId& id) {
    const auto it = std::find(hold_.pools.begin(), hold_.pools.end(), id);
    if (it == hold_.pools.end()) return std::nullopt;
    hold_.pools.erase(it);
    cca::releasePool(0, id);
    return id;
  }

  Figures read(Reading why) override {
    if (why == Reading::kProbe) {
      const auto s = deviceStats();
      return Figures{s.reserved_bytes[0].current, s.allocated_bytes[0].current, s.active_bytes[0].current};
    }
    if (why == Reading::kDemand) {
      std::size_t f = 0, t = 0;
      check(cudaMemGetInfo(&f, &t), "cudaMemGetInfo");
      return Figures{reservedNow(), 0, 0};
    }
    const auto ts = Clock::now();  // the peaks after each op: bookkeeping, not the allocator's time
    const auto s = cca::getDeviceStats(0);
    const Figures out{s.reserved_bytes[0].current, s.allocated_bytes[0].current, 0};
    overhead += since(ts);
    return out;
  }

  void after(std::size_t i, const BackendOp&) override {
    if (!job_.measure_at || *job_.measure_at != i) return;
    const auto tm = Clock::now();
    measureAtPeak(i, reservedNow(), mem_, check);
    overhead += since(tm);
  }

  double overhead = 0;
  std::vector<CleanupTiming> cleanups;

 private:
  void freeDeferred(void* p, std::uint64_t tag) {
    c10::DataPtr dp(p, p, hold_.alloc->raw_deleter(), c10::Device(c10::DeviceType::CUDA, 0));
    hold_.alloc->recordStream(dp, use_c10_);
    {
      auto& h = hook::state();
      const std::lock_guard<std::mutex> lock(h.m);
      h.tagging = tag;
    }
    dp.clear();  // the allocator's deleter: the free, which records an event on use_stream
    auto& h = hook::state();
    const std::lock_guard<std::mutex> lock(h.m);
    h.tagging = 0;
  }

  const ReplayJob& job_;
  Holdings& hold_;
  const StreamMap& streams_;
  DeviceMemory& mem_;
  const c10::cuda::CUDAStream use_c10_;
};

// The figures at the end of the run, from the allocator's statistics.
void finishFigures(const ReplayJob& job, TorchTarget& target, BackendResult& r) {
  r.timing.overhead_seconds = target.overhead;
  r.timing.cleanups = std::move(target.cleanups);
  const double busy = r.timing.wall_seconds - target.overhead;
  r.timing.requests_per_second = busy > 0 ? static_cast<double>(job.program->requests()) / busy : 0;
  r.final_stats = deviceStats();
  r.stats_known = true;
  r.final_reserved = r.final_stats.reserved_bytes[0].current;
  r.final_allocated = r.final_stats.allocated_bytes[0].current;
  if (!job.track_peaks) {
    r.peak_reserved.bytes = r.final_stats.reserved_bytes[0].peak;
    r.peak_allocated.bytes = r.final_stats.allocated_bytes[0].peak;
  }
  r.timing.driver_allocs = static_cast<std::size_t>(r.final_stats.num_device_alloc);
  r.timing.driver_frees = static_cast<std::size_t>(r.final_stats.num_device_free);
}

// The run's own recording: its trace entries and final layout, streams named as recorded; the
// settings it recorded must be the ones asked for (`conf`).
Status readOwnRecording(const ReplayJob& job, const std::string& conf, const StreamMap& streams, BackendResult& r) {
  auto snap = traces::readSnapshotBytes(r.snapshot_bytes, "torch backend snapshot");
  if (!snap) return Status::error("torch backend: its own snapshot does not read: " + snap.message());
  if (const traces::DeviceTrace* d = snap->findDevice(0)) r.events = eventsOf(*snap, *d);
  r.segments = segmentsOf(*snap, 0);
  for (auto& e : r.events) streams.toRecorded(e.stream);
  for (auto& s : r.segments) streams.toRecorded(s.stream);
  if (auto cfg = sim::configFromRecorded(snap->settings); cfg) {
    if (cfg->expandable_segments != job.config.expandable_segments ||
        cfg->max_split_size != job.config.max_split_size ||
        cfg->garbage_collection_threshold != job.config.garbage_collection_threshold ||
        cfg->roundup_power2_divisions != job.config.roundup_power2_divisions)
      r.notes.push_back(
          fmt::format("the allocator recorded settings '{}', not the '{}' applied", cfg->toConfString(), conf));
  }
  return {};
}

class TorchBackend final : public ReplayBackend {
 public:
  [[nodiscard]] std::string name() const override { return "torch"; }

  Expected<BackendResult> run(const ReplayJob& job) override {
    if (!job.prepared || !job.program) return Status::error("torch backend: no program");
    static std::atomic<bool> used{false};
    if (used.exchange(true))
      return Status::error("torch backend: it runs once per process (the allocator's state and statistics persist)");
    int count = 0;
    if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0)
      return Status::error(fmt::format("torch backend: no CUDA device is visible ({})",
                                       e != cudaSuccess ? cudaText(e) : std::string("0 devices")));
    if (!job.program->seed.empty())
      return Status::error(
          "torch backend: the real allocator starts empty: replay a ring-buffer trace's window "
          "without its rebuilt start state (EditedProgram::withoutSeed)");
    try {
      return runOn(job, count);
    } catch (const c10::Error& e) {
      return Status::error(std::string("torch backend: ") + e.what_without_backtrace());
    } catch (const std::exception& e) {
      return Status::error(std::string("torch backend: ") + e.what());
    }
  }

 private:
  Expected<BackendResult> runOn(const ReplayJob& job, int count) {
    const EditedProgram& prog = *job.program;
    BackendResult r;
    r.backend = "torch";
    check(cudaSetDevice(0), "cudaSetDevice");
    check(cudaFree(nullptr), "CUDA context");
    // Settings first: the device allocator reads some of them (max_split_size's statistic)
    // when it is created.
    const std::string conf = job.config.toConfString();
    applySettings(conf);
    cca::init(count);
    Holdings hold;
    hold.alloc = cca::get();
    readDeviceAtStart(0, r.memory, check);
    const StreamMap streams(prog, hold);
    makePools(prog, hold, r);
    CompletionSchedule schedule(prog);
    startHook(schedule);
    applyFraction(job, r.memory.total, r);
    holdBallast(job, hold, r);
    cca::resetPeakStats(0);

    constexpr std::size_t kMaxEntries = std::size_t{1} << 24;  // far more than any replay records
    torch::cuda::_record_memory_history(std::optional<std::string>("all"), std::optional<std::string>(), "python",
                                        kMaxEntries, true);
    hold.recording = true;

    TorchTarget target(job, hold, streams, r.memory);
    driveOps(job, schedule, target, job.track_peaks, r);
    finishFigures(job, target, r);

    const std::string pickled = torch::cuda::_memory_snapshot_pickled();
    r.snapshot_bytes.assign(pickled.begin(), pickled.end());
    noteHook(prog, r);
    hold.release();
    noteMemoryNotGivenBack(r.memory, r.notes);
    if (Status st = readOwnRecording(job, conf, streams, r); !st.ok()) return st;
    return r;
  }
};

}  // namespace

std::unique_ptr<ReplayBackend> makeTorchBackend() { return std::make_unique<TorchBackend>(); }

}  // namespace reservoir::replay::gpu
