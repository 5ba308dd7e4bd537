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

// A capture's sidecar is a few KB (the kit's, with every FSDP parameter listed, ~20 KB): a
// larger X.json is no sidecar, and is not read.
inline constexpr std::uint64_t kMaxCaptureJsonBytes = std::uint64_t{16} << 20;

// Reads `path` (a capture JSON): a regular file of at most kMaxCaptureJsonBytes holding a JSON
// object, whose values are range-checked (fraction in [0, 1], device_total in [1, 2^62),
// reset_peaks_after_event an event index, statistics within int64; null is absent). Anything else
// is an error naming the file and what is wrong with it, never a value taken modulo 2^64.
Expected<CaptureFacts> readCaptureFacts(const std::string& path);
// The capture JSON beside a trace (captureJsonPath): nullopt when there is none; an error (its
// path and why) when something is there that cannot be used: a directory, a device, a file too
// large, not a JSON object, a value out of range. readTrace calls it, so every front end refuses
// the same sidecars.
Expected<std::optional<CaptureFacts>> captureFactsBeside(const std::string& trace_path);
// captureFactsBeside, with any problem as "no facts" (for tests that only want the figures).
std::optional<CaptureFacts> findCaptureFacts(const std::string& trace_path);
// Where a trace's capture JSON is: X.json for X.pickle, X.pickle.zst, X.pkl.gz, ...
std::string captureJsonPath(const std::string& trace_path);

}  // namespace reservoir::replay
