#include "reservoir/replay/event_times.h"

#include <algorithm>
#include <limits>

namespace reservoir::replay {

EventTimes::EventTimes(const traces::DeviceTrace& trace) : trace_(&trace) {
  std::int64_t t = 0;
  for (std::size_t e = 0; e < size(); ++e) {
    const std::int64_t own = trace.timeOf(e);
    if (e > 0 && own < t) {
      const auto ev = static_cast<std::uint32_t>(e);
      if (!run_end_.empty() && run_end_.back() == ev && run_time_.back() == t) {
        run_end_.back() = ev + 1;
      } else {
        run_begin_.push_back(ev);
        run_end_.push_back(ev + 1);
        run_time_.push_back(t);
      }
      continue;
    }
    t = own;
  }
}

std::int64_t EventTimes::operator[](std::size_t event) const {
  if (!run_begin_.empty()) {
    const auto it = std::upper_bound(run_begin_.begin(), run_begin_.end(), event);
    if (it != run_begin_.begin()) {
      const auto k = static_cast<std::size_t>(it - run_begin_.begin()) - 1;
      if (event < run_end_[k]) return run_time_[k];
    }
  }
  return trace_->timeOf(event);
}

std::size_t EventTimes::lowerBound(std::int64_t t) const {
  std::size_t lo = 0, hi = size();
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if ((*this)[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

std::size_t EventTimes::upperBound(std::int64_t t) const {
  // The first time > t is the first >= t + 1 (times are integers); none is above the largest.
  return t == std::numeric_limits<std::int64_t>::max() ? size() : lowerBound(t + 1);
}

}  // namespace reservoir::replay
