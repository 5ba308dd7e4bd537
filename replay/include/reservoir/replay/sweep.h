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
  // Evaluate only slice `slice` of `slices` equal parts of the candidates (in the order they are
  // made): a sweep split over processes, put back together by mergeSweepSlices.
  std::size_t slice = 0;
  std::size_t slices = 1;
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

// Best first: no new out-of-memory, then the objective (reserved at the point, else peak
// reserved), then peak reserved, then fewer empty_cache calls; a stable sort.
void rankCandidates(std::vector<SweepCandidate>& candidates);

// The slices of one trace's sweep (SweepOptions::slice 0..slices-1, in that order) as the one
// report runSweep gives with slices = 1 (timing aside: seconds add up).
SweepReport mergeSweepSlices(const std::vector<SweepReport>& slices);

// One sweep over several traces (the ranks of one job, swept with the same options): each
// candidate is scored on its worst trace, the largest objective (and peak reserved) over the
// traces; a candidate a trace did not make (its point is not in that trace) leaves that trace at
// its baseline. Baselines are the maxima over the traces, savings the worst baseline minus the
// candidate's worst; a new out-of-memory on any trace counts; empty_cache calls are the most on
// one trace.
SweepReport worstOverTraces(const std::vector<SweepReport>& per_trace);

}  // namespace reservoir::replay
