// Reserved memory as the recording tells it: the segment events on top of a start state. The
// one definition of how a trace entry changes reserved bytes, and of the capacity the recorded
// ooms imply (cudaMemGetInfo's free bytes plus what the cache held when the malloc failed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "reservoir/traces/snapshot.h"

namespace reservoir::traces {

// +size for segment_alloc and segment_map, -size for segment_free and segment_unmap, else 0.
[[nodiscard]] inline std::int64_t reservedChange(const TraceEvent& e) {
  switch (e.action) {
    case Action::kSegmentAlloc:
    case Action::kSegmentMap: return static_cast<std::int64_t>(e.size);
    case Action::kSegmentFree:
    case Action::kSegmentUnmap: return -static_cast<std::int64_t>(e.size);
    default: return 0;
  }
}

struct RecordedReserved {
  std::int64_t peak = 0;                        // the highest reserved bytes, start state included
  std::optional<std::size_t> peak_event;        // the segment event that reached it (none: the start)
  std::optional<ByteCount> capacity_from_ooms;  // the smallest device_free + reserved at an oom
};

// Walks `trace`'s events from `start_reserved` bytes.
RecordedReserved walkRecordedReserved(const DeviceTrace& trace, std::int64_t start_reserved);

}  // namespace reservoir::traces
