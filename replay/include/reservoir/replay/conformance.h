// Conformance replay: the trace's own requests through the model, with the trace as the oracle
// for what the model cannot know (cudaMalloc addresses and failures, expandable reservations,
// when record_stream work completes), compared event by event with the recording.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reservoir/core/status.h"
#include "reservoir/replay/capture_facts.h"
#include "reservoir/replay/program.h"
#include "reservoir/replay/wording.h"
#include "reservoir/simulator/allocator.h"
#include "reservoir/traces/request_stream.h"
#include "reservoir/traces/snapshot.h"
#include "reservoir/traces/window_start.h"

namespace reservoir::replay {

using sim::ByteCount;

inline constexpr std::uint64_t kH200TotalMemory = 150109880320ull;

struct ReplayEnvironment {
  std::optional<double> fraction;               // memory fraction (set_per_process_memory_fraction)
  std::optional<ByteCount> total_memory;        // totalGlobalMem
  std::optional<std::string> settings;          // PYTORCH_CUDA_ALLOC_CONF to use instead of the recorded one
  std::shared_ptr<const CaptureFacts> capture;  // figures to compare the final statistics with (shared)
  // How notes and errors name an input to give or a command to run: the front end's that made
  // this environment (replayEnvironment); null: plain words.
  const Wording* wording = nullptr;
};

struct ConformanceOptions {
  ReplayEnvironment env;
  bool expensive_checks = false;
  bool keep_timeline = false;  // per-event reserved/allocated/active, for peaks and plots
  Program* program = nullptr;  // when set, receives the trace's requests (complete even past a divergence)
  // When set, receives the request stream the replay was built on (so callers need not build
  // it a second time). Not filled when `requests` is given (the caller has it).
  traces::RequestStream* request_stream = nullptr;
  // When set, the replay runs on this stream (buildRequestStream of the same device of the same
  // snapshot) instead of building its own: a caller that keeps one (the GUI's load stage) spares
  // the replay a second copy of it.
  const traces::RequestStream* requests = nullptr;
  // Event boundaries where the program called torch.cuda.reset_peak_memory_stats(): peaks in
  // the capture's memory_stats() count from the last one.
  std::vector<std::uint32_t> reset_peaks_at;
  // With no reset_peaks_at: when only `.peak` statistics differ from the capture's, find the
  // reset position from the replay (three more replays) and report it in a note.
  bool find_peak_resets = true;
  // With no fraction known (none given, no capture JSON's): when the replay diverges as a memory
  // fraction would make it (ConformanceReport::missing_fraction), say so, and look for the
  // fraction that makes it exact (a few more replays).
  bool find_missing_fraction = true;
  std::function<void(std::size_t done, std::size_t total)> progress;
  const std::atomic<bool>* cancel = nullptr;
  // Called after each request the replay makes (its events [first, end)) with the model as it
  // stands then (its peaks(), totals()). A replay that refits its start state calls it again
  // from event 0. With reset_peaks_before_each_request, the peaks are the one request's.
  std::function<void(std::size_t first, std::size_t end, const sim::CachingAllocator& model)> after_request;
  // Resets the peaks before every request (reset_peaks_at then adds nothing): for the peak-reset
  // search.
  bool reset_peaks_before_each_request = false;
};

struct Divergence {
  std::size_t event_index = 0;
  std::string expected;    // the recorded event
  std::string simulated;   // what the model did instead
  std::string request;     // the request being replayed
  std::string stack;       // its allocation stack (innermost first)
  std::string pool_state;  // the free blocks of that stream near the size
  std::string reason;      // short explanation
};

struct Mismatch {
  std::string what;
  std::string expected;
  std::string simulated;
};

// A memory fraction the run may have set (torch.cuda.set_per_process_memory_fraction) and the
// snapshot does not record: why the divergence is of the kind a fraction explains, and the
// fraction a short search found that makes the replay exact (none: none of those tried did).
struct MissingFraction {
  std::string why;
  std::optional<double> fraction;
  std::size_t tried = 0;  // fractions replayed in the search
};

struct TimelinePoint {
  std::int64_t reserved = 0;
  std::int64_t allocated = 0;
  std::int64_t active = 0;
  std::int64_t requested = 0;
};

struct ConformanceReport {
  std::size_t device_index = 0;
  std::int64_t device = 0;
  std::string settings;  // the allocator settings replayed
  double fraction = 1.0;
  ByteCount total_memory = 0;
  // Where total_memory comes from: "given" (the environment's: a capacity given for the device),
  // the capture JSON's path (its device_total), or empty: assumed, an H200's (kH200TotalMemory),
  // for want of either.
  std::string total_memory_source;
  bool window_complete = true;
  std::size_t events_total = 0;
  std::size_t events_compared = 0;
  std::optional<Divergence> first_divergence;
  std::vector<Mismatch> layout_mismatches;  // final segments vs the snapshot's
  std::vector<Mismatch> stats_mismatches;   // final statistics vs the capture's memory_stats
  std::vector<std::string> stats_compared;
  std::vector<std::string> notes;     // interpretation choices, things not derivable
  std::size_t empty_cache_calls = 0;  // inferred from the recording
  sim::DeviceStats final_stats;
  std::vector<TimelinePoint> timeline;  // after each event (keep_timeline)
  std::string invariant_failure;
  std::optional<MissingFraction> missing_fraction;  // find_missing_fraction's finding

  [[nodiscard]] bool exact() const {
    return !first_divergence && layout_mismatches.empty() && stats_mismatches.empty() && invariant_failure.empty();
  }
};

// Replays device `device_index` of `snapshot`. Errors are for unusable input (bad settings,
// an unrebuildable window start); divergences are reported, not errors.
Expected<ConformanceReport> runConformance(const traces::Snapshot& snapshot, std::size_t device_index,
                                           const ConformanceOptions& options);

// The allocator settings to replay with: the override, else the recorded ones.
Expected<sim::AllocatorConfig> replayConfig(const traces::Snapshot& snapshot, const ReplayEnvironment& env);

// Where the program called torch.cuda.reset_peak_memory_stats(), as event boundaries for
// ConformanceOptions::reset_peaks_at: the points given (e.g. "after:train.py:step", "event:N");
// when none are given, the event the capture's X.json names (reset_peaks_after_event); else none.
struct PeakResets {
  std::vector<std::uint32_t> boundaries;
  std::string source;  // "" (none), "given", or the capture JSON's path
  std::string note;    // for the report when the boundaries came from the capture JSON
};
Expected<PeakResets> choosePeakResets(const traces::Snapshot& snapshot, std::size_t device_index,
                                      const CaptureFacts* capture, const std::vector<std::string>& points);

// The verdict on a trace's recording: the conformance replay with the peak resets `resets`
// names (choosePeakResets), else with the reset found from the replay when only `.peak`
// statistics differ (options.find_peak_resets), and the note saying where the resets came
// from. The one rule for peak resets that `check`, `replay` (the model on the recording) and
// the Python package use.
Expected<ConformanceReport> checkRecording(const traces::Snapshot& snapshot, std::size_t device_index,
                                           ConformanceOptions options, const PeakResets& resets);

// A snapshot recorded without allocation history (_record_memory_history off, or
// enabled="state"): no device trace, or only `snapshot` entries (torch 2.11 leaves one). Its
// segments can be inspected, but there is nothing to replay; the sentence says so, else
// nullopt. `device` indexes snapshot.devices (nullopt: every device).
std::optional<std::string> nothingToReplay(const traces::Snapshot& snapshot,
                                           std::optional<std::size_t> device = std::nullopt,
                                           const Wording& wording = plainWording());

// Warnings about the settings a replay uses, once each: recorded keys this model does not
// know (replayed as if absent, so the result may differ), torch's own non-fatal parse
// warnings, and settings whose effect the trace cannot show (stream reserve classes).
std::vector<std::string> settingsNotes(const sim::AllocatorConfig& config);

// "alloc addr=0x7f.. size=1048576 stream=0" and the like.
std::string describeEvent(const traces::Snapshot& snapshot, const traces::TraceEvent& event);
std::string describeEvent(const sim::SimEvent& event);
// "name (file:line) <- caller (file:line) ..." for a stack.
std::string describeStack(const traces::Snapshot& snapshot, StackId stack, std::size_t max_frames = 8);

}  // namespace reservoir::replay
