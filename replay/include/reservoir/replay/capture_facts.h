// What a capture measured beside its snapshot (our capture scripts write X.json next to
// X.pickle): the memory fraction, the device's total memory, memory_stats() at dump time.
// A snapshot records none of these.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "reservoir/core/status.h"

namespace reservoir::replay {

struct CaptureFacts {
  std::string path;
  std::optional<double> fraction;             // set_per_process_memory_fraction (0 = not set)
  std::optional<std::uint64_t> device_total;  // cudaMemGetInfo total
  std::map<std::string, std::int64_t> memory_stats;
  std::map<std::string, std::int64_t> step_figures;  // "step2.peak_reserved", "after_load.reserved", ...
  // The trace event after which the capture called reset_peak_memory_stats() (its peaks count
  // from there): the point `event:N`.
  std::optional<std::uint32_t> reset_peaks_after_event;
};

// Reads `path` (a capture JSON).
Expected<CaptureFacts> readCaptureFacts(const std::string& path);
// X.json beside X.pickle (or X.pickle.gz / .zst), if it exists and reads.
std::optional<CaptureFacts> findCaptureFacts(const std::string& trace_path);
// Where a trace's capture JSON is: X.json for X.pickle, X.pickle.zst, X.pkl.gz, ...
std::string captureJsonPath(const std::string& trace_path);

}  // namespace reservoir::replay
