// A per-event series that changes at few events (reserved bytes change only at segment events,
// mapped bytes only at map/unmap): its changes, not a value per event (8 bytes per event was a
// fifth of the GUI's memory on a 20 M-event trace).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace reservoir::replay {

class StepSeries {
 public:
  // Appends the value after event `event` (events in increasing order, the first one 0); kept
  // only when it differs from the value before.
  void push(std::uint32_t event, std::int64_t value) {
    if (values_.empty() || values_.back() != value) {
      events_.push_back(event);
      values_.push_back(value);
    }
    size_ = static_cast<std::size_t>(event) + 1;
  }
  // Appends `later`, a series of the events after this one's (a run's curve taken in pieces).
  void append(const StepSeries& later) {
    for (std::size_t k = 0; k < later.events_.size(); ++k) push(later.events_[k], later.values_[k]);
    size_ = std::max(size_, later.size_);
  }
  // The value after event `event` (< size()).
  [[nodiscard]] std::int64_t operator[](std::size_t event) const { return values_[changeAt(event)]; }
  [[nodiscard]] std::int64_t back() const { return values_.back(); }
  [[nodiscard]] std::size_t size() const { return size_; }  // events
  [[nodiscard]] bool empty() const { return size_ == 0; }
  // The same for walks that move an event or so at a time: `hint` is the change index of the
  // previous call (start it at 0); checked against its neighbours before a search.
  [[nodiscard]] std::int64_t at(std::size_t event, std::size_t& hint) const {
    if (hint >= events_.size() || events_[hint] > event) {
      if (hint > 0 && hint <= events_.size() && events_[hint - 1] <= event) --hint;
      else hint = changeAt(event);
    } else if (hint + 1 < events_.size() && events_[hint + 1] <= event) {
      ++hint;
      if (hint + 1 < events_.size() && events_[hint + 1] <= event) hint = changeAt(event);
    }
    return values_[hint];
  }
  // The index of the change in effect after `event`.
  [[nodiscard]] std::size_t changeAt(std::size_t event) const {
    return static_cast<std::size_t>(std::upper_bound(events_.begin(), events_.end(), event) - events_.begin()) - 1;
  }
  // The changes: after event changeEvents()[k] the value is changeValues()[k] (changeEvents()[0] == 0).
  [[nodiscard]] std::span<const std::uint32_t> changeEvents() const { return events_; }
  [[nodiscard]] std::span<const std::int64_t> changeValues() const { return values_; }

 private:
  std::vector<std::uint32_t> events_;
  std::vector<std::int64_t> values_;
  std::size_t size_ = 0;
};

}  // namespace reservoir::replay
