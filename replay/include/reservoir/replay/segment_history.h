// The segments over time, as the recording tells them: every reserved range (a cudaMalloc'd
// segment, or a range of pages mapped in an expandable segment) with the events it lived over,
// and every block allocated inside one. What a segment timeline draws; the start state comes
// from traces::rebuildWindowStart, so a ring-buffer trace starts with the segments it had.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "reservoir/core/status.h"
#include "reservoir/core/units.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::replay {

// A reserved range over events [begin, end): present after event `begin - 1` (0: at the
// start), gone after event `end - 1` (end = events: still there at the end).
struct SegmentSpan {
  Addr addr = 0;
  ByteCount size = 0;
  std::uint32_t begin = 0, end = 0;
  traces::StreamValue stream = 0;
  traces::PoolId pool;
  bool expandable = false;  // mapped pages of an expandable segment
};

// An allocation over events [begin, end) (alloc .. free_completed), inside `segment`.
struct BlockSpan {
  static constexpr std::uint32_t kNoSegment = 0xffffffffu;
  Addr addr = 0;
  ByteCount size = 0;
  std::uint32_t begin = 0, end = 0;
  StackId stack;                       // the alloc's stack (empty for a block allocated before the window)
  std::uint32_t segment = kNoSegment;  // index into SegmentHistory::segments
};

struct SegmentHistory {
  std::vector<SegmentSpan> segments;  // in the order they began
  std::vector<BlockSpan> blocks;      // in the order they began
  std::size_t events = 0;
  // The segment containing `addr` alive at `event` (kNoSegment when none).
  [[nodiscard]] std::uint32_t segmentAt(std::uint32_t event, Addr addr) const;
  // The block containing `addr` allocated at `event` (kNoBlock when none).
  static constexpr std::uint32_t kNoBlock = 0xffffffffu;
  [[nodiscard]] std::uint32_t blockAt(std::uint32_t event, Addr addr) const;
};

// The history of device index `device` of `snapshot`. Fails when the window's start state
// cannot be rebuilt.
Expected<SegmentHistory> segmentHistory(const traces::Snapshot& snapshot, std::size_t device);

}  // namespace reservoir::replay
