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
  FinalState final_state;
  std::size_t annotations = 0;
};

DeviceSummary summarizeDevice(const traces::Snapshot& snapshot, std::size_t device_index, const ReplayEnvironment& env);
FinalState finalState(const traces::Snapshot& snapshot, std::optional<std::int64_t> device);

}  // namespace reservoir::replay
