// Replay backends: execute a trace's requests (optionally edited, see edited_program.h) and
// report what the allocator did. The model backend runs on the CPU (it is what CI tests); the
// GPU backends (replay/gpu/: `torch`, the real c10 caching allocator through LibTorch, and
// `cuda`, the model's decisions executed with real driver calls) register themselves when the
// build has them. compareResults() says whether two runs agree, and where they first differ.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reservoir/replay/edited_program.h"
#include "reservoir/replay/whatif.h"
#include "reservoir/simulator/allocator.h"
#include "reservoir/simulator/stats.h"

namespace reservoir::replay {

// The stream that stands for "used on another stream" in record_stream uses (as in the
// conformance and what-if replays).
inline constexpr sim::StreamId kRecordStreamUse = ~sim::StreamId{0} - 1;

// One allocator trace entry (addresses as the backend saw them; oom: addr = device_free).
struct BackendEvent {
  traces::Action action = traces::Action::kUnknown;
  sim::Addr addr = 0;
  sim::ByteCount size = 0;
  sim::StreamId stream = 0;
};

struct ReplayJob {
  const PreparedTrace* prepared = nullptr;
  const EditedProgram* program = nullptr;
  sim::AllocatorConfig config;                           // the settings of this run
  double fraction = 1.0;                                 // set_per_process_memory_fraction
  std::optional<sim::ByteCount> capacity;                // the device memory the run may use (--capacity)
  sim::ByteCount overhead = 0;                           // memory outside the cache (--overhead)
  std::optional<sim::ByteCount> usable;                  // what the cache may take: capacity - overhead
  AddressModel address_model = AddressModel::kAnchored;  // model backend only
  bool record_events = true;                             // keep the trace entries (for comparisons)
  bool track_peaks = true;                // the op of each peak (the torch backend reads its stats per op)
  bool touch_memory = true;               // cuda backend: write every new segment / page
  std::optional<std::size_t> measure_at;  // cuda backend: index into program->ops of the predicted peak
  std::function<void(std::size_t done, std::size_t total)> progress;
  const std::atomic<bool>* cancel = nullptr;  // set (e.g. on SIGINT) to stop between ops
};

struct CleanupTiming {
  std::size_t index = 0;         // into EditedProgram::ops
  std::string what;              // the --cleanup text, or "recorded (op N)"
  std::int64_t released = 0;     // reserved bytes before minus after
  std::size_t driver_frees = 0;  // cudaFree / unmap calls it made
  double seconds = 0;            // the whole call
  double free_seconds = 0;       // in cudaFree / cuMemUnmap+cuMemRelease
  double sync_seconds = 0;       // in synchronizations
};

struct BackendTiming {
  double wall_seconds = 0;      // executing the ops (setup and teardown excluded)
  double overhead_seconds = 0;  // bookkeeping inside that time that is not the allocator's (stats reads)
  double requests_per_second = 0;
  std::size_t driver_allocs = 0, driver_frees = 0;               // cudaMalloc/map, cudaFree/unmap calls
  double alloc_seconds = 0, free_seconds = 0, sync_seconds = 0;  // cuda backend: time in those calls
  std::vector<CleanupTiming> cleanups;                           // every empty_cache executed (recorded and inserted)
};

// What the device reported (cuda and torch backends).
struct DeviceMemory {
  bool known = false;
  std::string device_name;
  std::uint64_t total = 0;
  std::uint64_t free_at_start = 0;         // cudaMemGetInfo free before the replay
  std::uint64_t outside_at_start = 0;      // total - free at start: CUDA context, other processes
  std::optional<std::size_t> measured_at;  // index into the ops where the peak was measured
  std::int64_t reserved_at_measure = 0;    // the cache's reserved bytes there
  std::uint64_t used_at_measure = 0;       // total - free there
  std::int64_t seen_at_measure = 0;        // used there minus outside_at_start: the cache on the device
  std::int64_t granularity = 0;            // seen - reserved: what the driver takes beyond the cache
  std::uint64_t ballast = 0;               // torch backend: memory held back to emulate a smaller device
  bool fits = true;                        // the run never had to refuse or failed a driver call
  std::size_t refused = 0;                 // driver calls refused to stay within the capacity
  std::size_t driver_failures = 0;         // driver calls that failed
};

struct BackendResult {
  std::string backend;
  PeakInfo peak_reserved, peak_allocated;  // op = index into the program's ops (kNoOp: not tracked)
  std::int64_t final_reserved = 0, final_allocated = 0;
  bool stats_known = false;
  sim::DeviceStats final_stats;
  std::vector<BackendEvent> events;
  std::vector<sim::SegmentView> segments;  // the final layout, by address
  std::vector<Probe> probes;
  std::vector<DemandResult> demands;
  std::size_t ooms = 0;
  std::optional<std::size_t> first_oom;  // index into the ops
  std::size_t ops_executed = 0;
  bool interrupted = false;  // stopped early (job.cancel)
  // The seeded segments (ring-buffer traces) where this run put them, in the program's order.
  std::vector<std::pair<sim::Addr, sim::ByteCount>> seed_segments;
  BackendTiming timing;
  DeviceMemory memory;
  std::vector<std::string> notes;
  // torch backend: its own recording (a protocol-2 pickle, as LibTorch writes it).
  std::vector<std::uint8_t> snapshot_bytes;
};

class ReplayBackend {
 public:
  virtual ~ReplayBackend() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  // Executes job.program; errors are for a backend that cannot run (no GPU, unsupported
  // program), not for differences.
  virtual Expected<BackendResult> run(const ReplayJob& job) = 0;
};

// --- the model backend and its parts, reusable by GPU backends

// When record_stream'd work completes: at the start of the program op the recording retired
// it (per stream in order, as CUDA events complete), or at a synchronization.
class CompletionSchedule {
 public:
  explicit CompletionSchedule(const EditedProgram& program);
  void setCurrentOp(std::uint32_t op) { current_ = op; }
  [[nodiscard]] std::uint32_t currentOp() const { return current_; }
  [[nodiscard]] std::uint32_t completionOf(std::uint64_t tag) const;
  [[nodiscard]] bool complete(std::uint64_t tag) const;  // due at the current op
  void poll(std::span<const sim::OutstandingEvent> outstanding, std::vector<std::size_t>& completed) const;
  void syncOrder(std::span<const sim::OutstandingEvent> outstanding, std::vector<std::size_t>& order) const;

 private:
  std::vector<std::uint32_t> completes_at_;  // by allocation id
  std::uint32_t current_ = 0;
};

// --- the op driver: one loop for every backend

// What a backend does for each kind of op; driveOps does the rest.
class OpTarget {
 public:
  // Why the driver reads the cache's figures (a backend may read them differently for each).
  enum class Reading { kProbe, kDemand, kPeak };
  struct Figures {
    std::int64_t reserved = 0, allocated = 0, active = 0;
  };
  OpTarget() = default;
  OpTarget(const OpTarget&) = delete;
  OpTarget& operator=(const OpTarget&) = delete;
  virtual ~OpTarget() = default;
  virtual void before(std::size_t /*index*/, const BackendOp& /*op*/) {}
  virtual bool allocate(const BackendOp& op) = 0;    // a malloc; false: out of memory
  virtual void deallocate(const BackendOp& op) = 0;  // a free; one whose malloc failed is skipped
  virtual void emptyCache(std::size_t index, const BackendOp& op) = 0;
  virtual void resetPeaks() = 0;
  virtual Figures read(Reading why) = 0;
  virtual void after(std::size_t /*index*/, const BackendOp& /*op*/) {}
};

// Runs job.program's ops on `target`, in order. Before each op it stops when job.cancel is set
// (r.interrupted, with a note) and tells `schedule` the program op it stands for; for each it
// calls target.before, the op's own call, target.after. It counts failed mallocs, records probes
// and demands (against job.usable), resets the peaks, with `track_peaks` keeps the peaks after the
// program's own ops, reports job.progress, and times the loop (r.timing.wall_seconds).
void driveOps(const ReplayJob& job, CompletionSchedule& schedule, OpTarget& target, bool track_peaks, BackendResult& r);

struct ModelRunHooks {
  std::function<void(std::size_t index, const BackendOp& op, const sim::CachingAllocator& model)> before;
  std::function<void(std::size_t index, const BackendOp& op, const sim::CachingAllocator& model)> after;
};

// Runs job.program through the model with `device` as the driver (the model backend passes
// the what-if device; the cuda backend a real one). `schedule` is told the current op.
BackendResult runModel(const ReplayJob& job, sim::DeviceModel& device, CompletionSchedule& schedule,
                       const ModelRunHooks& hooks = {});

std::unique_ptr<ReplayBackend> makeModelBackend();

// Backends by name: "model" always; "torch" and "cuda" once registered by a build that has them.
using BackendFactory = std::unique_ptr<ReplayBackend> (*)();
void registerBackend(const std::string& name, BackendFactory factory);
Expected<std::unique_ptr<ReplayBackend>> makeBackend(std::string_view name);
std::vector<std::string> registeredBackends();

// --- comparisons

struct EventDifference {
  std::size_t index = 0;  // into the events
  std::string expected;   // the reference run's event
  std::string got;        // the other run's
  std::string reason;
};

struct BackendComparison {
  std::size_t events_compared = 0;
  std::optional<EventDifference> first_difference;
  std::vector<Mismatch> layout_mismatches;
  std::vector<Mismatch> stats_mismatches;
  std::vector<std::string> stats_compared;
  std::vector<Mismatch> figure_mismatches;  // peaks, final figures, probes, ooms
  [[nodiscard]] bool exact() const {
    return !first_difference && layout_mismatches.empty() && stats_mismatches.empty() && figure_mismatches.empty();
  }
  // The figures a user reads (peaks, final reserved and allocated, probes, failed mallocs).
  [[nodiscard]] bool figuresEqual() const { return figure_mismatches.empty(); }
};

// Compares `got` with the reference `expected` (the model's prediction): the trace entries one
// by one (action, size, stream; addresses through the pairing of the segments they lie in,
// since each run gets its own from the driver), the final layout (segments as offsets), the
// final statistics and the figures. `all_stats` off: only the statistics' current values (runs that
// started from a seeded state built differently, as ring-buffer traces do).
BackendComparison compareResults(const BackendResult& expected, const BackendResult& got, bool all_stats = true);

// The recording of device `device_index` as backend events (addresses and streams as recorded).
std::vector<BackendEvent> eventsOf(const traces::Snapshot& snapshot, const traces::DeviceTrace& trace);
// The final segments of `device` in `snapshot`, as the model lists them.
std::vector<sim::SegmentView> segmentsOf(const traces::Snapshot& snapshot, std::int64_t device);

std::string describeBackendEvent(const BackendEvent& e);

// --- synthetic traces

// A synthetic trace holds about 75 bytes of memory per entry while it is made and written: the
// most entries one may ask for keeps that under 2 GB.
inline constexpr std::size_t kMaxSynthEvents = 25'000'000;

struct SynthOptions {
  std::size_t events = 1'000'000;  // at least this many trace entries (at most kMaxSynthEvents)
  std::uint64_t seed = 1;
  std::string settings;                           // PYTORCH_CUDA_ALLOC_CONF the trace is recorded with
  sim::ByteCount budget = 32ull << 30;            // live bytes stay under this
  sim::StreamId side_stream = 0x55d0c8a3f2b0ull;  // the second stream (0 is the default stream)
  double side_fraction = 0.2;                     // share of allocations on the side stream
  double record_stream_fraction = 0.5;            // of those, share freed with a record_stream use
  std::size_t empty_cache_every = 25'000;         // requests between empty_cache calls (0: never)
  sim::ByteCount total_memory = kH200TotalMemory;
  // Training steps of this many requests (0: none): each step frees what the last one left
  // live, then makes the same requests as the first (the same random draws), with stacks that
  // name the step (train.py:train_step) and its phase (model.py:phase_K): a periodic program.
  std::size_t step_requests = 0;
};

struct SynthTrace {
  traces::Snapshot snapshot;
  sim::DeviceStats final_stats;
  std::size_t requests = 0;
};

// A trace made by the model itself from a random workload (allocations of 1 B to 1 GiB, two
// streams, record_stream frees, periodic empty_cache), deterministic for a seed; in training
// steps that repeat (SynthOptions::step_requests).
Expected<SynthTrace> synthesizeTrace(const SynthOptions& options);

}  // namespace reservoir::replay
