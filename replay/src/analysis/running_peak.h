// The conformance replay's largest allocated figure and the first event where it stands, kept
// as the replay goes (one figure per request: a timeline point per event was 640 MB at 20 M).
#pragma once

#include <cstddef>
#include <cstdint>

#include "reservoir/replay/summary.h"

namespace reservoir::replay::detail {

class RunningAllocatedPeak {
 public:
  explicit RunningAllocatedPeak(const traces::DeviceTrace& trace) : trace_(trace) {}
  // Request [first, end) replayed; `allocated` after it stands for each of its events. A replay
  // that refits its start state starts again at event 0: what the earlier attempt saw is dropped.
  void request(std::size_t first, std::size_t end, std::int64_t allocated) {
    if (first == 0) peak_ = PeakPoint{};
    if (end <= first || (peak_.known && allocated <= peak_.bytes)) return;
    peak_ = PeakPoint{allocated, first, trace_.timeOf(first), trace_.events[first].stack, true};
  }
  [[nodiscard]] const PeakPoint& peak() const { return peak_; }

 private:
  const traces::DeviceTrace& trace_;
  PeakPoint peak_;
};

}  // namespace reservoir::replay::detail
