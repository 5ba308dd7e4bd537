// Searching for where cleanup belongs: candidate empty_cache placements at the entries and
// exits of the trace's call regions (from the call graph) and at annotation boundaries, plus
// candidate allocator settings, each replayed and ranked by the predicted peak reserved (or
// by reserved at a point) and by how many empty_cache calls it costs.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "reservoir/replay/whatif.h"

namespace reservoir::replay {

// The device every candidate runs on is the edited run's (EditedRunOptions: capacity,
// overhead, fraction, settings), chosen as `whatif` chooses it.
struct SweepOptions : EditedRunOptions {
  std::size_t max_candidates = 100;
  std::size_t top_functions = 40;    // call regions considered (by bytes allocated under them)
  bool try_settings = true;          // also candidate allocator settings
  std::optional<Point> minimize_at;  // rank by reserved at this point instead of peak reserved
  unsigned jobs = 0;                 // 0: every core
  std::uint32_t checkpoint_every = 4096;
  const std::atomic<bool>* cancel = nullptr;
  std::function<void(std::size_t done, std::size_t total)> progress;
};

struct SweepCandidate {
  std::vector<std::string> edits;  // flags that reproduce it: {"--cleanup", "after:x.py:f"} ...
  std::string description;
  std::int64_t peak_reserved = 0;
  std::int64_t peak_allocated = 0;
  std::optional<std::int64_t> reserved_at_point;  // when minimizing at a point
  std::int64_t saving = 0;                        // baseline objective - this objective
  std::size_t empty_cache_calls = 0;              // inserted by the candidate
  bool oom = false;
};

struct SweepReport {
  std::int64_t baseline_peak_reserved = 0;
  std::int64_t baseline_peak_allocated = 0;
  std::optional<std::int64_t> baseline_reserved_at_point;
  std::string objective;                   // "peak reserved" or "reserved at POINT"
  std::vector<SweepCandidate> candidates;  // best first
  std::size_t evaluated = 0;
  double seconds = 0;
  bool cancelled = false;
};

Expected<SweepReport> runSweep(const PreparedTrace& prepared, const SweepOptions& options);

}  // namespace reservoir::replay
