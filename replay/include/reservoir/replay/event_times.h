// The events' times made nondecreasing (a later event never shows an earlier time), read from
// the trace's own time column: only the runs of events whose recorded time is earlier than one before
// them are stored, with the time they are raised to (a copy per event was 8 bytes per event).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "reservoir/traces/snapshot.h"

namespace reservoir::replay {

class EventTimes {
 public:
  EventTimes() = default;
  // Reads `trace`'s times: the trace must outlive this (a LoadStage shares its snapshot).
  explicit EventTimes(const traces::DeviceTrace& trace);

  [[nodiscard]] std::int64_t operator[](std::size_t event) const;
  [[nodiscard]] std::size_t size() const { return trace_ ? trace_->events.size() : 0; }
  [[nodiscard]] bool empty() const { return size() == 0; }
  [[nodiscard]] std::int64_t front() const { return (*this)[0]; }
  [[nodiscard]] std::int64_t back() const { return (*this)[size() - 1]; }
  // The first event whose time is >= t (lowerBound) or > t (upperBound); size() when none.
  [[nodiscard]] std::size_t lowerBound(std::int64_t t) const;
  [[nodiscard]] std::size_t upperBound(std::int64_t t) const;
  // Runs of events raised to an earlier event's time (the recording's clock went back).
  [[nodiscard]] std::size_t raisedRuns() const { return run_begin_.size(); }

 private:
  const traces::DeviceTrace* trace_ = nullptr;
  // Run k covers events [run_begin_[k], run_end_[k]), each at time run_time_[k].
  std::vector<std::uint32_t> run_begin_, run_end_;
  std::vector<std::int64_t> run_time_;
};

}  // namespace reservoir::replay
