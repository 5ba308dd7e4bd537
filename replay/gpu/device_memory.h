// What the GPU backends read from the device around a run (internal to replay/gpu): its memory
// at the start, at the predicted peak, and what was not given back at the end. `check` is the
// backend's own: it throws the backend's error for a failed CUDA call.
#pragma once

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "reservoir/replay/backend.h"
#include "reservoir/simulator/sizes.h"

namespace reservoir::replay::gpu {

// The device's name and memory before the run.
template <typename Check>
void readDeviceAtStart(int device, DeviceMemory& mem, Check check) {
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  std::size_t free0 = 0, total = 0;
  check(cudaMemGetInfo(&free0, &total), "cudaMemGetInfo");
  mem.known = true;
  mem.device_name = prop.name;
  mem.total = total;
  mem.free_at_start = free0;
  mem.outside_at_start = total - free0;
}

// What the device holds at the predicted peak (op `index`, the cache's `reserved` bytes there),
// once its work is done: the cache on the device is what it uses beyond what it used at the start
// and the ballast.
template <typename Check>
void measureAtPeak(std::size_t index, std::int64_t reserved, DeviceMemory& mem, Check check) {
  std::size_t f = 0, t = 0;
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  check(cudaMemGetInfo(&f, &t), "cudaMemGetInfo");
  mem.measured_at = index;
  mem.reserved_at_measure = reserved;
  mem.used_at_measure = t - f;
  mem.seen_at_measure = static_cast<std::int64_t>(t - f) - static_cast<std::int64_t>(mem.outside_at_start) -
                        static_cast<std::int64_t>(mem.ballast);
  mem.granularity = mem.seen_at_measure - mem.reserved_at_measure;
}

// After the run, everything given back: a note when the device has clearly less free memory than
// at the start.
inline void noteMemoryNotGivenBack(const DeviceMemory& mem, std::vector<std::string>& notes) {
  std::size_t free_end = 0, total_end = 0;
  if (cudaMemGetInfo(&free_end, &total_end) == cudaSuccess && free_end + 64 * sim::kMiB < mem.free_at_start)
    notes.push_back(
        fmt::format("after the run the device has {} bytes less free than before it", mem.free_at_start - free_end));
}

}  // namespace reservoir::replay::gpu
