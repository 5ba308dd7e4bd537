#include "reservoir/traces/recorded_reserved.h"

#include <algorithm>

namespace reservoir::traces {

RecordedReserved walkRecordedReserved(const DeviceTrace& trace, std::int64_t start_reserved) {
  RecordedReserved w;
  std::int64_t reserved = start_reserved;
  w.peak = reserved;
  for (std::size_t i = 0; i < trace.events.size(); ++i) {
    const TraceEvent& e = trace.events[i];
    if (e.action == Action::kOom) {
      const auto c = e.deviceFree() + static_cast<ByteCount>(std::max<std::int64_t>(reserved, 0));
      w.capacity_from_ooms = w.capacity_from_ooms ? std::min(*w.capacity_from_ooms, c) : c;
      continue;
    }
    const std::int64_t change = reservedChange(e);
    if (change == 0) continue;
    reserved += change;
    if (reserved > w.peak) {
      w.peak = reserved;
      w.peak_event = i;
    }
  }
  return w;
}

}  // namespace reservoir::traces
