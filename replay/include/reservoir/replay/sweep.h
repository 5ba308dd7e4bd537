// Searching for where cleanup belongs: candidate empty_cache placements at the entries and
// exits of the trace's call regions (from the call graph) and at annotation boundaries, plus
// candidate allocator settings, each replayed and ranked by what a user can adopt: the
// saving on an objective (peak reserved, reserved at a point, the peak inside an annotation)
// within a cap on empty_cache calls (one per training step where steps are known), the time
// price of the calls breaking ties (docs/whatif.md, "The price of a cleanup").
#pragma once

#include <atomic>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reservoir/replay/whatif.h"

namespace reservoir::replay {

// What the sweep minimizes: `peak`, `reserved:POINT`, `peak-in:ANNOTATION` (a bare POINT is
// accepted as reserved:POINT).
struct SweepObjective {
  enum class Kind : std::uint8_t { kPeak, kReservedAt, kPeakIn };
  Kind kind = Kind::kPeak;
  std::optional<Point> point;                     // kReservedAt
  std::string annotation;                         // kPeakIn
  [[nodiscard]] std::string text() const;         // "peak", "reserved:POINT", "peak-in:NAME"
  [[nodiscard]] std::string description() const;  // "peak reserved", "reserved at POINT", ...
};
Expected<SweepObjective> parseSweepObjective(std::string_view text);

// Training steps, where the trace shows them: the occurrences of a step annotation
// (ProfilerStep#N, any record_function range named like a train step) or the runs of a
// train-step frame (train_step, training_step, ...).
struct TrainingSteps {
  std::size_t count = 0;
  std::string source;  // "annotation ProfilerStep", "frame resume.py:train_step"
};
std::optional<TrainingSteps> detectTrainingSteps(const traces::Snapshot& snap, std::size_t device_index);

// The time an empty_cache costs, calibrated on the cuda backend's measurements on an H200
// (docs/validation.md section 4; the derivation is in docs/whatif.md): the synchronisation,
// releasing what the cache held (cudaFree per segment, unmapping per byte of expandable
// pages), and mapping the memory again when the program needs it later.
struct CleanupPriceModel {
  double sync_seconds = 30e-6;            // per call (measured 0.02-0.04 ms, on an idle stream)
  double cuda_free_seconds = 80e-6;       // per segment released (0.17-0.28 ms for 3)
  double cuda_malloc_seconds = 80e-6;     // per segment allocated again later (0.10-0.37 ms for 3)
  double unmap_seconds_per_gib = 2.8e-3;  // expandable pages released (5.4-8.4 ms for 2.71 GiB)
  double map_seconds_per_gib = 2.8e-3;    // expandable pages mapped again later (4.2-13.1 ms for 2.71 GiB)
};
// The price of `edited` against `baseline`: the inserted calls' synchronisation plus the
// driver work the edited run does beyond the baseline's.
double cleanupPriceSeconds(const RunResult& baseline, const RunResult& edited, std::size_t inserted_calls,
                           const CleanupPriceModel& model = {});

// The depth of a placement at an annotation, which has no call depth of its own: ranked as the
// deepest; --json shows null.
inline constexpr std::uint32_t kAnnotationDepth = std::numeric_limits<std::uint32_t>::max();

struct SweepCandidate;

// The device every candidate runs on is the edited run's (EditedRunOptions: capacity,
// overhead, fraction, settings), chosen as `whatif` chooses it.
struct SweepOptions : EditedRunOptions {
  std::size_t max_candidates = 100;
  std::size_t top_functions = 40;  // call regions considered (by bytes allocated under them)
  bool try_settings = true;        // also candidate allocator settings
  SweepObjective objective;
  // At most this many empty_cache calls in the whole trace; unset: one per training step
  // where steps are known, else no cap.
  std::optional<std::size_t> max_calls;
  std::optional<std::size_t> steps;  // training steps, when the caller knows better than the trace
  CleanupPriceModel price;
  unsigned jobs = 0;  // 0: every core
  std::uint32_t checkpoint_every = 4096;
  // A placement's run goes on whole training steps at once where its state repeats from one
  // step to the next (the same answers as replaying every op; off: every op is replayed).
  bool skip_repeats = true;
  // Evaluate only slice `slice` of `slices` equal parts of the candidates (in the order they are
  // made): a sweep split over processes, put back together by mergeSweepSlices.
  std::size_t slice = 0;
  std::size_t slices = 1;
  const std::atomic<bool>* cancel = nullptr;
  std::function<void(std::size_t done, std::size_t total)> progress;
  // Each candidate as soon as it is replayed (one call at a time, from a worker thread); its
  // `pareto` is not known yet.
  std::function<void(const SweepCandidate&)> on_candidate;
};

// One change a candidate makes to the run, as data: each front end words it (the command line
// as flags, Python as keywords, the GUI as an edit).
struct CandidateChange {
  enum class Kind : std::uint8_t { kCleanup, kSettings };
  Kind kind = Kind::kCleanup;
  std::string point;     // kCleanup: where torch.cuda.empty_cache() goes ("after:x.py:f")
  std::string settings;  // kSettings: the whole PYTORCH_CUDA_ALLOC_CONF the candidate runs with
  friend bool operator==(const CandidateChange&, const CandidateChange&) = default;
};
std::string_view candidateChangeKindName(CandidateChange::Kind kind);  // "cleanup", "settings"

// The command line's flags for the changes ({"--cleanup", POINT}, {"--set", SETTINGS}): what
// `sweep --json` has always listed as a candidate's "edits", kept for the scripts that read them.
std::vector<std::string> changeFlags(const std::vector<CandidateChange>& changes);

struct SweepCandidate {
  std::vector<CandidateChange> changes;  // what the candidate changes (with the sweep's own device options)
  std::vector<std::string> edits;        // changeFlags(changes)
  std::string description;
  std::int64_t peak_reserved = 0;
  std::int64_t peak_allocated = 0;
  std::optional<std::int64_t> reserved_at_point;  // the objective reserved:POINT
  std::optional<std::int64_t> peak_in;            // the objective peak-in:ANNOTATION
  std::int64_t objective_value = 0;               // what the objective measures in this run
  std::int64_t saving = 0;                        // baseline objective - this objective
  std::size_t empty_cache_calls = 0;              // inserted by the candidate, in the whole trace
  std::optional<double> calls_per_step;           // when steps are known
  double price_seconds = 0;                       // 0 for a settings candidate
  std::optional<double> price_per_step_seconds;   // when steps are known: price_seconds over the steps
  double mean_reserved = 0;                       // reserved averaged over the run (ties)
  std::uint32_t depth = 0;  // the program's own frames around the placement (ties: nearer its top level);
                            // kAnnotationDepth at an annotation
  bool settings = false;    // a settings candidate (no empty_cache)
  bool within_cap = true;   // empty_cache_calls <= the report's max_calls
  bool pareto = false;      // no other saves as much for less
  bool oom = false;         // runs out of memory on the sweep's device (also when the unedited run does)
};

struct SweepReport {
  std::int64_t baseline_peak_reserved = 0;
  std::int64_t baseline_peak_allocated = 0;
  std::optional<std::int64_t> baseline_reserved_at_point;
  std::int64_t baseline_objective = 0;
  SweepObjective objective_spec;
  std::string objective;  // objective_spec.description()
  std::optional<TrainingSteps> steps;
  std::optional<std::size_t> max_calls;    // the cap applied (given, or one per step)
  std::string max_calls_source;            // "given", "one per training step (...)", "no cap: steps unknown"
  std::vector<SweepCandidate> candidates;  // best first: within the cap, largest saving, cheapest
  std::vector<std::size_t> pareto;         // indices into candidates: saving against price, cheapest first
  std::size_t evaluated = 0;
  // The replays that made them: placements whose runs are the same (the same empty_cache calls
  // between the same allocator requests) share one.
  std::size_t replays = 0;
  // Training steps those replays went over at once where their state repeated (skip_repeats).
  std::uint64_t steps_skipped = 0;
  double seconds = 0;
  bool cancelled = false;
};

Expected<SweepReport> runSweep(const PreparedTrace& prepared, const SweepOptions& options);

// The ranking rule (exposed for the GUI's re-sorting and the tests): OOM last, then within
// the cap first, then the largest saving, the lowest price, the placement nearest the program's
// top level (fewest of its own frames around it, library frames not counted: code the user
// can edit), the lowest mean reserved (memory returned sooner), the fewest calls.
bool sweepRanksBefore(const SweepCandidate& x, const SweepCandidate& y);

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
