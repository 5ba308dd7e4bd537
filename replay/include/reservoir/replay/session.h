// A trace opened for interactive use (the GUI): loaded on a worker thread, published in
// immutable stages so that a first view can be drawn before the model has run:
//   1. LoadStage: the trace (its shared snapshot), per-event series straight from the recording (reserved,
//      live requested bytes, mapped expandable bytes, time) and compact allocation lifetimes;
//   2. ModelStage: the prepared program, a StateIndex (allocator state at any event, the
//      modelled allocated/active timeline) and the call graph.
// Nothing here depends on Qt: callbacks run on the worker thread; the GUI forwards them.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "reservoir/core/compact_series.h"
#include "reservoir/replay/callgraph.h"
#include "reservoir/replay/capture_facts.h"
#include "reservoir/replay/conformance.h"
#include "reservoir/replay/event_times.h"
#include "reservoir/replay/step_series.h"
#include "reservoir/replay/trace.h"
#include "reservoir/replay/whatif.h"
#include "reservoir/traces/request_stream.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::replay {

// Allocation lifetimes (what the live-block bands need): a view of the device's request stream,
// which the load stage keeps and the model stage's replay runs on (one copy of the allocations,
// where a table of their lifetimes beside a second stream built by the replay was two).
// Allocation a is live after event e when begin(a) <= e < end(a).
class AllocationLifetimes {
 public:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  AllocationLifetimes() = default;
  // `events`: the trace's entries (the end of the allocations live at its end).
  AllocationLifetimes(std::shared_ptr<const traces::RequestStream> stream, std::size_t events);

  [[nodiscard]] std::size_t count() const { return allocations().size(); }
  [[nodiscard]] std::size_t events() const { return events_; }
  // Its alloc event (0 for an allocation made before the window).
  [[nodiscard]] std::uint32_t begin(std::size_t a) const { return allocations()[a].windowBegin(); }
  // Its free_completed event (events() when live at the end).
  [[nodiscard]] std::uint32_t end(std::size_t a) const {
    return allocations()[a].windowEnd(static_cast<std::uint32_t>(events_));
  }
  // Its free_requested event (kNone when not freed in the window).
  [[nodiscard]] std::uint32_t freeRequested(std::size_t a) const { return allocations()[a].free_requested_event; }
  [[nodiscard]] bool beforeWindow(std::size_t a) const { return allocations()[a].beforeWindow(); }
  [[nodiscard]] std::uint64_t size(std::size_t a) const { return allocations()[a].size; }  // requested bytes
  [[nodiscard]] StackId stack(std::size_t a) const { return allocations()[a].stack; }
  // Event e's allocation (alloc, free_requested, free_completed), kNone for the others.
  [[nodiscard]] std::uint32_t eventAllocation(std::size_t e) const {
    return stream_ && e < stream_->event_allocation.size() ? stream_->event_allocation[e].value() : kNone;
  }
  [[nodiscard]] std::span<const traces::Allocation> allocations() const {
    return stream_ ? std::span<const traces::Allocation>(stream_->allocations) : std::span<const traces::Allocation>();
  }
  [[nodiscard]] std::span<const AllocationId> eventAllocations() const {
    return stream_ ? std::span<const AllocationId>(stream_->event_allocation) : std::span<const AllocationId>();
  }
  [[nodiscard]] const traces::RequestStream* stream() const { return stream_.get(); }
  [[nodiscard]] const std::shared_ptr<const traces::RequestStream>& sharedStream() const { return stream_; }

 private:
  std::shared_ptr<const traces::RequestStream> stream_;
  std::size_t events_ = 0;
};
static_assert(AllocationLifetimes::kNone == traces::kNoEvent && AllocationLifetimes::kNone == AllocationId::kInvalid);

// Per-event values after each event, from the recording alone.
struct EventSeries {
  StepSeries reserved;                // segment events on top of the window's start state
  CompactSeries live;                 // requested bytes of allocations alive (alloc .. free_completed)
  StepSeries mapped;                  // bytes mapped in expandable segments (empty if none)
  EventTimes time_us;                 // made nondecreasing (read from the entries)
  std::vector<std::uint32_t> ooms;     // events that are oom entries
  std::uint32_t peak_reserved_event = 0;
  std::int64_t peak_reserved = 0;
  std::uint32_t peak_live_event = 0;
  std::int64_t peak_live = 0;
  [[nodiscard]] std::size_t size() const { return live.size(); }
};

struct AnnotationMark {
  std::uint32_t event = 0;  // first event at or after its time
  std::int64_t time_us = 0;
  bool start = true;
  std::string name;
};

// The annotations of `trace`'s device (and of no device), each at the first event at or after
// its time (`time_us`: the events' times made nondecreasing), in time order. The GUI's marks and
// the report's.
std::vector<AnnotationMark> markAnnotations(const traces::Snapshot& snap, const traces::DeviceTrace& trace,
                                            const EventTimes& time_us);

struct TraceFacts {
  std::string path;
  std::uint64_t file_bytes = 0;
  std::int64_t device = 0;
  std::size_t device_index = 0;
  std::size_t devices = 0;
  std::size_t events = 0;
  bool complete = true;
  std::int64_t start_reserved = 0;
  std::int64_t first_time_us = 0, last_time_us = 0;
  std::size_t allocations = 0, segments_final = 0, frames = 0, stacks = 0;
  std::string settings;  // the recorded PYTORCH_CUDA_ALLOC_CONF
  bool expandable = false;
  std::string anomalies;  // one line per non-zero counter
};

struct LoadStage {
  Trace trace;  // the snapshot (shared) and its capture facts
  std::size_t device_index = 0;
  AllocationLifetimes lifetimes;
  EventSeries series;
  std::vector<AnnotationMark> annotations;
  TraceFacts facts;

  [[nodiscard]] const traces::Snapshot& snapshot() const { return *trace.snapshot; }
  [[nodiscard]] const std::string& path() const { return trace.path; }
  [[nodiscard]] const traces::DeviceTrace& deviceTrace() const { return snapshot().devices[device_index]; }
  [[nodiscard]] ReplayEnvironment environment() const { return trace.environment(); }
};

struct ModelStage {
  Trace trace;                        // the load stage's trace (the same shared snapshot)
  PreparedTrace prepared;             // request stream kept: exports name each block's allocation from it
  std::unique_ptr<StateIndex> index;  // built on `prepared` (this object never moves)
  RunResult run;                      // the baseline run (its curves moved to the arrays below)
  // Per op (after op j): modelled reserved (its changes), allocated and active bytes.
  StepSeries reserved;
  CompactSeries allocated, active;
  std::unique_ptr<CallGraph> graph;
  // The first event of each op (sorted), read from the prepared program's ops.
  [[nodiscard]] OpFirstEvents opEvents() const { return OpFirstEvents(prepared.program.ops); }
  // The last op whose first event is <= event (kNoOp before the first op).
  [[nodiscard]] std::uint32_t opAtOrBefore(std::uint32_t event) const;
  [[nodiscard]] std::vector<sim::SegmentView> stateAtEvent(std::uint32_t event) const;
};

// The blocks live when a ring buffer's window began (the model's start state), and those of
// them the window frees: these have lifetimes from its start (the timeline draws them), the
// others no event in the trace at all. Zero for a complete trace. Bytes are block sizes for the
// start state and the allocations' sizes for the freed ones, so their difference is approximate.
struct WindowStartBlocks {
  std::int64_t bytes = 0;
  std::size_t blocks = 0;
  std::int64_t freed_bytes = 0;  // of those, allocations the window frees
  std::size_t freed_blocks = 0;
  [[nodiscard]] std::size_t neverFreedBlocks() const { return blocks > freed_blocks ? blocks - freed_blocks : 0; }
  [[nodiscard]] std::int64_t neverFreedBytes() const { return bytes > freed_bytes ? bytes - freed_bytes : 0; }
};
WindowStartBlocks windowStartBlocks(const LoadStage& loaded, const ModelStage& model);

// Stage 1 for an already read snapshot (tests, benchmarks).
Expected<std::unique_ptr<LoadStage>> buildLoadStage(Trace trace, std::optional<std::size_t> device = std::nullopt);
Expected<std::unique_ptr<LoadStage>> loadTraceFile(const std::string& path, std::optional<std::size_t> device,
                                                   const std::atomic<bool>* cancel,
                                                   std::function<void(std::uint64_t, std::uint64_t)> progress);
// Stage 2. `every`: ops between the state index's checkpoints (a cursor move replays at
// most that many ops; memory grows with ops / every). Raised where the program has more than
// kMaxModelCheckpoints * every ops, so that at most that many checkpoints are kept: at 20 M
// events, 814 of them at every 16,384 ops held 74 MB.
inline constexpr std::uint32_t kDefaultCheckpointEvery = 16384;
inline constexpr std::size_t kMaxModelCheckpoints = 256;
// The checkpoint spacing buildModelStage uses for a program of `ops` ops.
std::uint32_t checkpointSpacing(std::size_t ops, std::uint32_t every);
Expected<std::unique_ptr<ModelStage>> buildModelStage(const LoadStage& loaded, std::uint32_t every,
                                                      const std::atomic<bool>* cancel,
                                                      std::function<void(std::size_t, std::size_t)> progress);

// A what-if run on an already prepared trace (the same report runWhatIf gives, without
// preparing the trace again). Falls back to runWhatIf when a capacity is given.
Expected<WhatIfReport> runWhatIfPrepared(const ModelStage& stage, const WhatIfOptions& options);

// Returns memory freed by the stages to the system (glibc's malloc_trim; a no-op elsewhere).
void releaseFreedMemory();

enum class SessionStage : std::uint8_t { kReading, kModelling, kDone };

struct SessionCallbacks {
  std::function<void(SessionStage, std::uint64_t done, std::uint64_t total)> progress;  // throttled
  std::function<void(std::shared_ptr<const LoadStage>)> loaded;
  std::function<void(std::shared_ptr<const ModelStage>)> modelled;
  // Why the trace could not be loaded: the reader's Status (headline() in plain words first,
  // message() in full), or "cancelled".
  std::function<void(const Status&)> failed;
};

// Loads one trace on its own thread. Callbacks run on that thread.
class TraceSession {
 public:
  TraceSession(std::string path, SessionCallbacks callbacks, std::optional<std::size_t> device = std::nullopt);
  ~TraceSession();  // cancels and joins
  TraceSession(const TraceSession&) = delete;
  TraceSession& operator=(const TraceSession&) = delete;

  void start();
  void cancel();
  void wait();
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  void run();
  std::string path_;
  SessionCallbacks callbacks_;
  std::optional<std::size_t> device_;
  std::atomic<bool> cancel_{false};
  std::thread thread_;
};

}  // namespace reservoir::replay
