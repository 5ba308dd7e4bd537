// The `cuda` backend: the model makes every decision, and each one that reaches the driver is
// executed for real: cudaMalloc / cudaFree for segments, cuMemAddressReserve / cuMemCreate /
// cuMemMap / cuMemUnmap for expandable segments. New memory is written once (so the pages are
// really there), cudaMemGetInfo says what the device holds at the predicted peak, and every
// driver call and synchronization is timed: what an empty_cache costs, per call and in total.
// The run never takes more than the capacity it was given (a call that would is refused, as a
// driver out of memory would), and gives everything back on exit and on error.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <chrono>
#include <map>
#include <stdexcept>

#include "device_memory.h"
#include "gpu_backends.h"
#include "reservoir/replay/backend.h"

namespace reservoir::replay::gpu {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void* asPtr(sim::Addr a) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(a)); }
sim::Addr asAddr(const void* p) { return static_cast<sim::Addr>(reinterpret_cast<std::uintptr_t>(p)); }

std::string cudaText(cudaError_t e) { return fmt::format("{} ({})", cudaGetErrorName(e), cudaGetErrorString(e)); }

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The driver API through the runtime's entry points: no link against libcuda, so a build
// without a driver (CI) still starts, and says "no CUDA device" when asked to run.
struct Driver {
  CUresult (*memAddressReserve)(CUdeviceptr*, std::size_t, std::size_t, CUdeviceptr, unsigned long long) = nullptr;
  CUresult (*memAddressFree)(CUdeviceptr, std::size_t) = nullptr;
  CUresult (*memCreate)(CUmemGenericAllocationHandle*, std::size_t, const CUmemAllocationProp*,
                        unsigned long long) = nullptr;
  CUresult (*memRelease)(CUmemGenericAllocationHandle) = nullptr;
  CUresult (*memMap)(CUdeviceptr, std::size_t, std::size_t, CUmemGenericAllocationHandle, unsigned long long) = nullptr;
  CUresult (*memUnmap)(CUdeviceptr, std::size_t) = nullptr;
  CUresult (*memSetAccess)(CUdeviceptr, std::size_t, const CUmemAccessDesc*, std::size_t) = nullptr;
  CUresult (*getErrorName)(CUresult, const char**) = nullptr;
};

template <typename Fn>
void entry(const char* name, Fn& fn) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult status{};
  const cudaError_t e = cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &status);
  if (e != cudaSuccess || !p || status != cudaDriverEntryPointSuccess)
    throw CudaError(fmt::format("the driver has no {} ({})", name, cudaText(e)));
  fn = reinterpret_cast<Fn>(p);
}

const Driver& driver() {
  static const Driver d = [] {
    Driver x;
    entry("cuMemAddressReserve", x.memAddressReserve);
    entry("cuMemAddressFree", x.memAddressFree);
    entry("cuMemCreate", x.memCreate);
    entry("cuMemRelease", x.memRelease);
    entry("cuMemMap", x.memMap);
    entry("cuMemUnmap", x.memUnmap);
    entry("cuMemSetAccess", x.memSetAccess);
    entry("cuGetErrorName", x.getErrorName);
    return x;
  }();
  return d;
}

std::string cuText(CUresult r) {
  const char* name = nullptr;
  if (driver().getErrorName) driver().getErrorName(r, &name);
  return name ? std::string(name) : fmt::format("CUresult {}", static_cast<int>(r));
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw CudaError(fmt::format("{}: {}", what, cudaText(e)));
}

// The driver as the model sees it, for real.
class RealCudaDevice final : public sim::DeviceModel {
 public:
  RealCudaDevice(sim::ByteCount model_total, std::optional<sim::ByteCount> usable, bool touch, int device,
                 CompletionSchedule& schedule)
      : total_(model_total), usable_(usable), touch_(touch), device_(device), schedule_(schedule) {}
  RealCudaDevice(const RealCudaDevice&) = delete;
  RealCudaDevice& operator=(const RealCudaDevice&) = delete;
  ~RealCudaDevice() override { releaseAll(); }

  // Gives back everything still held (segments, pages, reservations).
  void releaseAll() noexcept {
    (void)::cudaDeviceSynchronize();
    for (const auto& [addr, size] : segments_) (void)::cudaFree(asPtr(addr));
    segments_.clear();
    for (const auto& [addr, page] : pages_) {
      (void)driver().memUnmap(static_cast<CUdeviceptr>(addr), page.size);
      (void)driver().memRelease(page.handle);
    }
    pages_.clear();
    for (const auto& [addr, r] : reservations_) (void)driver().memAddressFree(static_cast<CUdeviceptr>(addr), r.size);
    reservations_.clear();
    used_ = 0;
  }

  [[nodiscard]] sim::ByteCount totalMemory() const override { return total_; }

  std::optional<sim::Addr> cudaMalloc(sim::ByteCount size, sim::StreamId) override {
    if (usable_ && used_ + size > *usable_) {
      ++refused;
      return std::nullopt;
    }
    void* p = nullptr;
    const auto t0 = Clock::now();
    const cudaError_t e = ::cudaMalloc(&p, size);
    alloc_seconds += since(t0);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      ++failures;
      return std::nullopt;
    }
    ++allocs;
    if (touch_) (void)cudaMemsetAsync(p, 0, size, nullptr);
    segments_[asAddr(p)] = size;
    used_ += size;
    return asAddr(p);
  }

  void cudaFree(sim::Addr addr, sim::ByteCount size) override {
    const auto t0 = Clock::now();
    const cudaError_t e = ::cudaFree(asPtr(addr));
    free_seconds += since(t0);
    ++frees;
    if (e != cudaSuccess) throw CudaError("cudaFree: " + cudaText(e));
    segments_.erase(addr);
    used_ -= size;
  }

  sim::Addr reserveAddress(sim::ByteCount size, sim::ByteCount page, sim::StreamId) override {
    CUdeviceptr p = 0;
    const auto t0 = Clock::now();
    const CUresult r = driver().memAddressReserve(&p, size, 0, 0, 0);
    alloc_seconds += since(t0);
    if (r != CUDA_SUCCESS) throw CudaError(fmt::format("driver().memAddressReserve({} bytes): {}", size, cuText(r)));
    reservations_[static_cast<sim::Addr>(p)] = Reservation{size, page};
    return static_cast<sim::Addr>(p);
  }

  void releaseAddress(sim::Addr addr, sim::ByteCount size) override {
    (void)driver().memAddressFree(static_cast<CUdeviceptr>(addr), size);
    reservations_.erase(addr);
  }

  bool mapPages(sim::Addr addr, sim::ByteCount size, sim::StreamId) override {
    if (usable_ && used_ + size > *usable_) {
      ++refused;
      return false;
    }
    const sim::ByteCount page = pageAt(addr);
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device_;
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    std::vector<sim::Addr> done;
    const auto t0 = Clock::now();
    for (sim::ByteCount off = 0; off < size; off += page) {
      const sim::Addr va = addr + off;
      CUmemGenericAllocationHandle h{};
      CUresult r = driver().memCreate(&h, page, &prop, 0);
      if (r == CUDA_SUCCESS) {
        r = driver().memMap(static_cast<CUdeviceptr>(va), page, 0, h, 0);
        if (r != CUDA_SUCCESS) (void)driver().memRelease(h);
      }
      if (r == CUDA_SUCCESS) {
        r = driver().memSetAccess(static_cast<CUdeviceptr>(va), page, &access, 1);
        if (r != CUDA_SUCCESS) {
          (void)driver().memUnmap(static_cast<CUdeviceptr>(va), page);
          (void)driver().memRelease(h);
        }
      }
      if (r != CUDA_SUCCESS) {
        // Out of memory while creating pages: this call's pages go back, nothing is mapped.
        for (sim::Addr d : done) {
          (void)driver().memUnmap(static_cast<CUdeviceptr>(d), page);
          (void)driver().memRelease(pages_[d].handle);
          pages_.erase(d);
        }
        alloc_seconds += since(t0);
        ++failures;
        return false;
      }
      pages_[va] = Page{h, page};
      done.push_back(va);
    }
    alloc_seconds += since(t0);
    ++allocs;
    if (touch_) (void)cudaMemsetAsync(asPtr(addr), 0, size, nullptr);
    used_ += size;
    return true;
  }

  void unmapPages(sim::Addr addr, sim::ByteCount size) override {
    // As torch does: the stream's work must be done before pages go (unmap does not wait).
    auto t0 = Clock::now();
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    sync_seconds += since(t0);
    t0 = Clock::now();
    const sim::ByteCount page = pageAt(addr);
    for (sim::ByteCount off = 0; off < size; off += page) {
      const auto it = pages_.find(addr + off);
      if (it == pages_.end()) continue;
      (void)driver().memUnmap(static_cast<CUdeviceptr>(it->first), it->second.size);
      (void)driver().memRelease(it->second.handle);
      pages_.erase(it);
    }
    free_seconds += since(t0);
    ++frees;
    used_ -= size;
  }

  sim::ByteCount deviceFree() override {
    std::size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) return 0;
    sim::ByteCount f = free_b;
    if (usable_) f = std::min(f, *usable_ > used_ ? *usable_ - used_ : 0);
    return f;
  }

  void pollEvents(std::span<const sim::OutstandingEvent> outstanding, std::vector<std::size_t>& completed) override {
    schedule_.poll(outstanding, completed);
  }
  void syncOrder(std::span<const sim::OutstandingEvent> outstanding, std::vector<std::size_t>& order) override {
    const auto t0 = Clock::now();
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    sync_seconds += since(t0);
    schedule_.syncOrder(outstanding, order);
  }

  [[nodiscard]] sim::ByteCount used() const { return used_; }

  double alloc_seconds = 0, free_seconds = 0, sync_seconds = 0;
  std::size_t allocs = 0, frees = 0, refused = 0, failures = 0;

 private:
  struct Reservation {
    sim::ByteCount size, page;
  };
  struct Page {
    CUmemGenericAllocationHandle handle;
    sim::ByteCount size;
  };
  [[nodiscard]] sim::ByteCount pageAt(sim::Addr addr) const {
    auto it = reservations_.upper_bound(addr);
    if (it == reservations_.begin()) throw CudaError(fmt::format("map/unmap outside every reservation ({:#x})", addr));
    --it;
    return it->second.page;
  }

  sim::ByteCount total_;
  std::optional<sim::ByteCount> usable_;
  bool touch_;
  int device_;
  CompletionSchedule& schedule_;
  sim::ByteCount used_ = 0;
  std::map<sim::Addr, sim::ByteCount> segments_;
  std::map<sim::Addr, Reservation> reservations_;
  std::map<sim::Addr, Page> pages_;
};

class CudaBackend final : public ReplayBackend {
 public:
  [[nodiscard]] std::string name() const override { return "cuda"; }

  Expected<BackendResult> run(const ReplayJob& job) override {
    if (!job.prepared || !job.program) return Status::error("cuda backend: no program");
    int count = 0;
    if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0)
      return Status::error(fmt::format("cuda backend: no CUDA device is visible ({})",
                                       e != cudaSuccess ? cudaText(e) : std::string("0 devices")));
    try {
      return runOn(job);
    } catch (const CudaError& e) {
      return Status::error(std::string("cuda backend: ") + e.what());
    }
  }

 private:
  Expected<BackendResult> runOn(const ReplayJob& job) {
    const int device = 0;
    check(cudaSetDevice(device), "cudaSetDevice");
    check(cudaFree(nullptr), "CUDA context");
    (void)driver();  // the entry points, or a clear error
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    DeviceMemory mem;
    readDeviceAtStart(device, mem, check);
    const std::size_t free0 = mem.free_at_start;
    // Never more than the capacity given, and never more than the device has free now.
    std::optional<sim::ByteCount> usable = job.usable;
    const sim::ByteCount margin = 256 * sim::kMiB;  // the driver's own bookkeeping as pages get mapped
    const sim::ByteCount device_limit = free0 > margin ? free0 - margin : 0;
    if (!usable || *usable > device_limit) usable = device_limit;

    CompletionSchedule schedule(*job.program);
    RealCudaDevice dev(job.prepared->total_memory, usable, job.touch_memory, device, schedule);
    ModelRunHooks hooks;
    std::vector<CleanupTiming> cleanups;
    struct Before {
      std::int64_t reserved = 0;
      double free_s = 0, sync_s = 0;
      std::size_t frees = 0;
      Clock::time_point t0;
    } before;
    hooks.before = [&](std::size_t, const BackendOp& op, const sim::CachingAllocator& model) {
      if (op.kind != BackendOpKind::kEmptyCache) return;
      before = Before{model.totals().reserved, dev.free_seconds, dev.sync_seconds, dev.frees, Clock::now()};
    };
    hooks.after = [&](std::size_t i, const BackendOp& op, const sim::CachingAllocator& model) {
      const std::int64_t reserved = model.totals().reserved;
      if (op.kind == BackendOpKind::kEmptyCache) {
        CleanupTiming c;
        c.index = i;
        c.what = op.edit >= 0 ? job.program->edits[static_cast<std::size_t>(op.edit)]
                              : fmt::format("recorded empty_cache (op {})", op.op);
        c.seconds = since(before.t0);
        c.released = before.reserved - reserved;
        c.driver_frees = dev.frees - before.frees;
        c.free_seconds = dev.free_seconds - before.free_s;
        c.sync_seconds = dev.sync_seconds - before.sync_s;
        cleanups.push_back(std::move(c));
      }
      if (job.measure_at && *job.measure_at == i) {
        const auto t0 = Clock::now();
        measureAtPeak(i, reserved, mem, check);
        overhead_s += since(t0);
      }
    };
    overhead_s = 0;
    BackendResult r = runModel(job, dev, schedule, hooks);
    r.backend = "cuda";
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    r.timing.overhead_seconds = overhead_s;
    r.timing.alloc_seconds = dev.alloc_seconds;
    r.timing.free_seconds = dev.free_seconds;
    r.timing.sync_seconds = dev.sync_seconds;
    r.timing.driver_allocs = dev.allocs;
    r.timing.driver_frees = dev.frees;
    r.timing.cleanups = std::move(cleanups);
    const double busy = r.timing.wall_seconds - r.timing.overhead_seconds;
    r.timing.requests_per_second = busy > 0 ? static_cast<double>(job.program->requests()) / busy : 0;
    mem.refused = dev.refused;
    mem.driver_failures = dev.failures;
    mem.fits = dev.refused == 0 && dev.failures == 0;
    r.memory = mem;
    if (usable != job.usable)
      r.notes.push_back(
          fmt::format("capacity for the cache: {} bytes (the device's free memory at start less 256 MiB)", *usable));
    dev.releaseAll();
    noteMemoryNotGivenBack(mem, r.notes);
    return r;
  }

  double overhead_s = 0;
};

}  // namespace

std::unique_ptr<ReplayBackend> makeCudaBackend() { return std::make_unique<CudaBackend>(); }

}  // namespace reservoir::replay::gpu
