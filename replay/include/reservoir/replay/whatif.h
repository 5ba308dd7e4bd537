// What-if analysis: replay one device's requests under edits (empty_cache inserted at a
// point, tensors released earlier, other allocator settings, another capacity) and predict
// reserved memory, its peak, and out-of-memory failures.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reservoir/core/compact_series.h"
#include "reservoir/replay/conformance.h"
#include "reservoir/replay/edited_run.h"
#include "reservoir/replay/point.h"
#include "reservoir/replay/program.h"
#include "reservoir/replay/step_series.h"

namespace reservoir::replay {

struct Edit {
  enum class Kind : std::uint8_t { kRelease, kCleanup, kProbe, kDemand, kResetPeaks };
  Kind kind = Kind::kCleanup;
  std::string text;  // as given ("after:train.py:212", "opt.py:step@before:train_step")
  Point point;
  std::optional<FrameSpec> selector;  // kRelease: allocation stacks to free
  sim::ByteCount bytes = 0;           // kDemand
};

// Parsers for the text of each kind of edit: cleanup POINT, release SELECTOR@POINT, probe
// POINT, demand BYTES@POINT, reset-peaks POINT. Errors quote the text and name no flag (the
// command line adds its flag, the GUI its edit).
Expected<Edit> parseEdit(Edit::Kind kind, std::string_view text);
// "KIND TEXT" as one string ("cleanup after:x.py:load", "demand 4GiB@event:10").
Expected<Edit> parseEdit(std::string_view kind_and_text);
std::string_view editKindName(Edit::Kind kind);  // "cleanup", "release", "probe", "demand", "reset-peaks"
std::optional<Edit::Kind> editKindFromName(std::string_view name);
Expected<Edit> parseCleanup(std::string_view text);
Expected<Edit> parseRelease(std::string_view text);
Expected<Edit> parseProbe(std::string_view text);
Expected<Edit> parseDemand(std::string_view text);
Expected<Edit> parseResetPeaks(std::string_view text);

enum class AddressModel : std::uint8_t {
  kRecorded,  // segments the recording has (same size, in order) keep their recorded address
  kDriver,    // every address from the driver model (top-down placement, 2 MiB aligned)
  // The recording's addresses while the edited run's cudaMalloc/cudaFree sequence agrees with
  // the recording's segment_alloc/segment_free sequence, the driver model's from the first op
  // that departs from it on (below the lowest address handed out until then).
  kAnchored,
};
// "recorded", "driver", "anchored".
const char* addressModelName(AddressModel model);

// The edited run's device (settings, capacity, overhead, fraction: EditedRunOptions), the
// edits, and what to compute.
struct WhatIfOptions : EditedRunOptions {
  std::vector<Edit> edits;
  AddressModel address_model = AddressModel::kAnchored;
  bool analyze_peak = true;  // what pins the cache at the peak (a second pass)
  bool keep_timeline = false;  // both runs' figures after each op (RunResult::timeline)
  bool keep_curves = false;    // the edited run's reserved and allocated after each op, compact (RunResult::curves)
};

struct PeakInfo {
  std::int64_t bytes = 0;
  std::uint32_t op = kNoOp;  // the op after which it is reached
  std::uint32_t event = 0;   // the recorded event of that op
  std::int64_t time_us = 0;
  StackId stack;
};

struct Probe {
  std::string point;
  std::int64_t reserved = 0, allocated = 0, active = 0;
  std::uint32_t boundary = 0;
};

// Reserved just after an edit that changes the cache at its point (a cleanup, a release) applies,
// once per occurrence of the point; in the baseline, which applies neither, reserved at the same
// point (nothing freed there), so that a cleanup always reports its own effect, probed or not.
struct EditFigure {
  Edit::Kind kind = Edit::Kind::kCleanup;
  std::string text;   // the edit as given ("after:x.py:load", "opt.py:step@before:train_step")
  std::string point;  // its point's text
  std::int64_t reserved = 0, allocated = 0;
  std::uint32_t boundary = 0;
};

struct DemandResult {
  std::string text;
  sim::ByteCount bytes = 0;
  bool capacity_known = false;
  bool fits = true;
  std::int64_t free = 0;  // capacity - overhead - reserved at the point
};

struct OomInfo {
  std::uint32_t op = 0;
  std::uint32_t event = 0;
  sim::ByteCount size = 0;
  sim::StreamId stream = 0;
  StackId stack;
  std::size_t count = 0;  // failed mallocs in the run
  // Which allocation request failed (0-based, among the run's mallocs): the same request in the
  // source and in a re-run of the edited program, whose event numbers differ by the segment
  // events the edit adds or removes before it.
  std::uint64_t request = 0;
  // Reserved and allocated bytes right after the failed malloc (torch has already released the
  // cache in its retry): where a program that does not catch the OutOfMemoryError ends. The
  // run's final figures go on past it, as if the program caught the error and carried on.
  std::int64_t reserved_after = 0;
  std::int64_t allocated_after = 0;
};

struct PinnedSegment {
  sim::Addr address = 0;
  sim::ByteCount size = 0;
  sim::ByteCount free_bytes = 0;                                // cached but not releasable
  std::vector<std::pair<sim::ByteCount, StackId>> live_blocks;  // (size, allocation stack)
};

struct PeakAnalysis {
  std::int64_t reserved = 0, allocated = 0;
  std::int64_t cached = 0;            // reserved - allocated
  std::int64_t releasable = 0;        // what an empty_cache at the peak would return
  std::vector<PinnedSegment> pinned;  // the rest, by segment (largest first)
};

// What a run asked of the driver: the counts the sweep's time price is computed from.
struct DriverWork {
  std::uint64_t cuda_mallocs = 0, cuda_frees = 0;      // whole segments
  std::uint64_t bytes_mapped = 0, bytes_unmapped = 0;  // expandable segments' pages
};

// An op range [begin, end) (the sweep's peak-in:ANNOTATION windows).
struct OpWindow {
  std::uint32_t begin = 0, end = 0;
};

// Per op (after op j) reserved, allocated and active bytes, as columns: the GUI's curves (a
// TimelinePoint per op holds a fourth figure and is copied into these otherwise). Reserved changes
// only at the ops that allocate or free a segment: its changes are kept.
struct OpCurves {
  StepSeries reserved;
  CompactSeries allocated, active;
};

struct RunResult {
  PeakInfo peak_reserved;
  PeakInfo peak_allocated;
  std::int64_t final_reserved = 0, final_allocated = 0;
  std::vector<Probe> probes;
  std::vector<EditFigure> at_edits;  // per cleanup and release occurrence, in run order
  std::vector<DemandResult> demands;
  std::optional<OomInfo> oom;
  std::optional<PeakAnalysis> at_peak;
  std::size_t empty_cache_calls = 0;  // recorded ones plus inserted cleanups
  std::size_t segments_allocated = 0;
  DriverWork driver;
  double mean_reserved = 0;                     // reserved averaged over the ops (bytes)
  std::optional<std::int64_t> peak_in_windows;  // highest reserved inside RunSettings::peak_windows
  std::vector<TimelinePoint> timeline;          // after each op (keep_timeline)
  OpCurves curves;                              // after each op (keep_curves)
  std::string invariant_failure;
  // Periods of the program the run went over at once where its state repeated (Runner::skipRepeats).
  std::uint64_t periods_skipped = 0;
  // Baseline only: how the modelled run compares with the recording.
  std::size_t address_drift = 0;               // events whose address differs from the recording's
  std::optional<std::size_t> decision_change;  // first event whose action, size or stream differs
};

struct WhatIfReport {
  std::size_t device_index = 0;
  std::vector<Edit> edits;  // as given (the verdict names them)
  std::string settings_baseline, settings_whatif;
  RunResult baseline;
  RunResult whatif;
  std::int64_t recorded_peak_reserved = 0;
  bool baseline_matches_recording = true;
  std::optional<sim::ByteCount> capacity;  // usable device memory (before overhead)
  std::string capacity_source;
  EditedRun edited_run;           // the edited run's device, as chosen (capacity, fraction, settings)
  ConformanceReport conformance;  // the exactness of the model on this trace
  std::vector<std::string> notes;
};

// Runs baseline and edited replays of one device of `snapshot`.
Expected<WhatIfReport> runWhatIf(std::shared_ptr<const traces::Snapshot> snapshot, std::size_t device_index,
                                 const ReplayEnvironment& env, const WhatIfOptions& options);

// The pieces, for sweeps that replay many edits of one program.
struct PreparedTrace {
  std::shared_ptr<const traces::Snapshot> snapshot;  // shared: a prepared trace keeps its snapshot alive
  std::size_t device_index = 0;
  // Each allocation's stack, by allocation id: all a prepared trace needs of the request stream
  // once the program is made (a copy of the stacks, or the stream itself where the caller shares
  // it).
  AllocationStacks allocation_stacks;
  [[nodiscard]] StackId allocationStack(std::size_t id) const { return allocation_stacks[id]; }
  Program program;
  // An op's stack (replay::opStack over this trace's entries and allocation stacks).
  [[nodiscard]] StackId opStack(const Op& op) const {
    return replay::opStack(op, snapshot->devices[device_index], allocation_stacks);
  }
  ConformanceReport conformance;
  sim::AllocatorConfig recorded_config;
  sim::ByteCount total_memory = 0;
  double fraction = 1.0;
  std::optional<sim::ByteCount> derived_capacity;  // usable bytes, from recorded ooms (device_free + reserved)
  // Recorded oom entries without 'device_free': no capacity is derived from them.
  bool oom_without_device_free = false;
  // The capacity the recorded ooms imply, when the recording itself reserves more (memory outside
  // PyTorch's cache changed: an oom with device_free 0 and nothing reserved implies 0 bytes): it
  // is no capacity, and derived_capacity stays empty.
  std::optional<sim::ByteCount> contradicted_capacity;
  std::int64_t recorded_peak_reserved = 0;
  // For the what-if device models, computed once: the recording's cudaMalloc addresses by
  // size (in order) and, per allocation tag, the op at which its deferred free completed (only
  // the allocations freed with record_stream uses: (tag, op), sorted by tag).
  std::map<sim::ByteCount, std::vector<sim::Addr>> recorded_segments_by_size;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> completes_at_by_tag;
  [[nodiscard]] std::uint32_t completionOf(std::uint64_t tag) const;
  // The recording's segment_alloc (alloc) and segment_free events in order (the anchored model).
  struct SegmentEvent {
    bool alloc = true;
    sim::ByteCount size = 0;
    sim::Addr addr = 0;
  };
  std::vector<SegmentEvent> recorded_segment_events;
  // Per recorded cudaMalloc (segment_alloc) in order: whether the driver put it right after the
  // one before (the anchored model follows that contiguity once the edited run departs).
  std::vector<bool> recorded_malloc_follows_previous;
};

// `cancel`, when set while it runs, stops it within 4096 events: the trace is then not prepared
// (an error saying it was cancelled). `requests`, when given, is the device's request stream
// (traces::buildRequestStream of it), shared with the caller: the replay then builds none, and the
// prepared trace reads its allocations' stacks from it.
Expected<PreparedTrace> prepareTrace(std::shared_ptr<const traces::Snapshot> snapshot, std::size_t device_index,
                                     const ReplayEnvironment& env, const std::atomic<bool>* cancel = nullptr,
                                     std::shared_ptr<const traces::RequestStream> requests = nullptr);

// check's verdict on a prepared trace's recording (checkRecording with the capture's peak
// resets, else the ones found from the replay): `prepared.conformance` itself where it already
// is that verdict (exact, with no reset to apply), else a new replay in `env` (the environment
// the trace was prepared in).
Expected<ConformanceReport> recordingVerdict(const PreparedTrace& prepared, const ReplayEnvironment& env);

struct ResolvedEdit {
  Edit edit;
  std::vector<Gap> gaps;
};

Expected<std::vector<ResolvedEdit>> resolveEdits(const PreparedTrace& prepared, const std::vector<Edit>& edits);

// runWhatIf's report on a trace already prepared (prepareTrace with the same environment; a
// --capacity also goes into the environment's total memory, see runWhatIf).
Expected<WhatIfReport> runWhatIfOn(const PreparedTrace& prepared, const WhatIfOptions& options);

// An event the modelled run emitted, with the op that produced it (for exports).
struct EmittedEvent {
  sim::SimEvent event;
  std::uint32_t op = 0;
};

struct RunSettings {
  sim::AllocatorConfig config;
  double fraction = 1.0;
  std::optional<sim::ByteCount> usable;  // capacity - overhead
  AddressModel address_model = AddressModel::kAnchored;
  bool analyze_peak = false;
  bool keep_timeline = false;
  bool keep_curves = false;
  bool compare_with_recording = false;
  // The cleanups and releases among the edits only measure (RunResult::at_edits) and change
  // nothing: the baseline's figures at the edited run's points.
  bool observe_edits_only = false;
  // Whether RunResult::at_edits is filled: a sweep scores a candidate by its peaks, probes and
  // driver work, and an edit applied 58,000 times made as many figures (two strings each).
  bool figures_at_edits = true;
  std::optional<std::uint32_t> stop_after_op;          // for analyses at a point
  std::vector<EmittedEvent>* record_events = nullptr;  // receives every event the model emits
  std::vector<OpWindow> peak_windows;                  // sorted, disjoint: RunResult::peak_in_windows
  // Checked every 4096 ops: once set, the run stops there (its result is incomplete: the caller,
  // who set it, drops it).
  const std::atomic<bool>* cancel = nullptr;
};

RunResult replayProgram(const PreparedTrace& prepared, const std::vector<ResolvedEdit>& edits,
                        const RunSettings& settings);

// One replay with checkpoints, to get the allocator's state after any op quickly (the GUI's
// cursor, analyses at a point): nearest checkpoint, then at most `every` ops forward.
class StateIndex {
 public:
  StateIndex(const PreparedTrace& prepared, std::vector<ResolvedEdit> edits, RunSettings settings,
             std::uint32_t every = 2048, const std::atomic<bool>* cancel = nullptr,
             std::function<void(std::size_t done, std::size_t total)> progress = {});
  ~StateIndex();
  StateIndex(const StateIndex&) = delete;
  StateIndex& operator=(const StateIndex&) = delete;

  [[nodiscard]] const RunResult& result() const;  // the whole run (timeline per op when kept)
  // The run's curves (keep_curves), handed over: result().curves stays empty.
  [[nodiscard]] OpCurves takeCurves();
  [[nodiscard]] bool cancelled() const;
  // Segments and blocks after op `op` (kNoOp: before the first op).
  [[nodiscard]] std::vector<sim::SegmentView> segmentsAfterOp(std::uint32_t op) const;
  // The op a recorded event belongs to (the first op at or after it).
  [[nodiscard]] std::uint32_t opAtEvent(std::uint32_t event) const;
  [[nodiscard]] const PreparedTrace& prepared() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace reservoir::replay
