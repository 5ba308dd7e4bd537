// Facts about one device's trace: what happened (events by action, time span) and the
// figures people ask first (peak reserved / allocated, where they are reached, the final
// state). Peak reserved comes from the recorded segment events; allocated bytes count whole
// blocks (rounding and unsplit slack included), so they come from the conformance replay.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "reservoir/replay/conformance.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::replay {

struct PeakPoint {
  std::int64_t bytes = 0;
  std::size_t event_index = 0;  // first event at which the peak is reached
  std::int64_t time_us = 0;
  StackId stack;
  bool known = false;
};

struct FinalState {
  std::int64_t reserved = 0, allocated = 0, active = 0, requested = 0;
  std::size_t segments = 0, blocks = 0;
  std::map<std::string, std::size_t> blocks_by_state;
  std::size_t expandable_segments = 0;
};

struct DeviceSummary {
  std::int64_t device = 0;
  std::size_t events = 0;
  std::array<std::size_t, traces::kActionCount> actions{};
  std::int64_t first_time_us = 0, last_time_us = 0;
  bool complete = true;
  std::int64_t start_reserved = 0;  // reserved at the first event (0 for a complete trace)
  PeakPoint peak_reserved;
  PeakPoint peak_allocated;
  std::string peak_allocated_note;  // why it is missing or partial
  // Whether the conformance replay ran (SummaryOptions::model_allocated_peak): the allocated
  // peak and its point come from it alone (kModelledFacts).
  bool modelled = false;
  FinalState final_state;
  std::size_t annotations = 0;
};

// The facts of a summary that come from the conformance replay (their JSON keys).
inline constexpr std::array<std::string_view, 2> kModelledFacts{"peak_allocated", "peak_allocated_at"};

struct SummaryOptions {
  // The allocated peak counts whole blocks (rounding and unsplit slack included), so it comes
  // from the conformance replay: most of a summary's time (a 900 k-entry trace: 0.3 s of 0.5 s),
  // so it runs only when asked (Input::kPeakAllocated); else the note says how to ask.
  bool model_allocated_peak = false;
};

DeviceSummary summarizeDevice(const traces::Snapshot& snapshot, std::size_t device_index, const ReplayEnvironment& env,
                              const SummaryOptions& options = {});
FinalState finalState(const traces::Snapshot& snapshot, std::optional<std::int64_t> device);

}  // namespace reservoir::replay
