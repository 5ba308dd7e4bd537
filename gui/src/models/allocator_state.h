// The allocator's state at one event, as the state view shows it: each block classified
// (allocated, pending free, cached free, inactive split, unmapped pages of an expandable
// reservation) and the live blocks that pin an otherwise free segment marked. Pure.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "reservoir/simulator/allocator.h"

namespace reservoir::gui {

enum class BlockKind : std::uint8_t {
  kAllocated,      // in use by a tensor
  kPendingFree,    // freed, waiting for a stream's work (record_stream)
  kCachedFree,     // free, and its whole segment is free: empty_cache would return it
  kInactiveSplit,  // free, but in a segment that live blocks keep: not releasable
  kUnmapped,       // expandable reservation: address space with no pages mapped
};
inline constexpr int kBlockKinds = 5;
const char* blockKindName(BlockKind kind);

struct StateBlock {
  std::uint64_t address = 0, size = 0, requested = 0;
  BlockKind kind = BlockKind::kAllocated;
  std::uint32_t allocation = kNoAllocationId;  // the allocation (tag - 1) that last used it
  bool pinning = false;                        // live, in a segment that is mostly free
  static constexpr std::uint32_t kNoAllocationId = 0xffffffffu;
};

struct StateSegment {
  std::uint64_t address = 0, size = 0;
  std::uint64_t allocated = 0, free_bytes = 0;
  std::uint64_t stream = 0;
  bool is_large = true, expandable = false, unmapped_gap = false, pinned = false;
  std::uint32_t first_block = 0, block_count = 0;
};

struct AllocatorState {
  std::uint32_t event = 0;
  std::vector<StateSegment> segments;  // by address
  std::vector<StateBlock> blocks;
  std::int64_t reserved = 0, allocated = 0, releasable = 0, pinned_free = 0;
  [[nodiscard]] std::span<const StateBlock> blocksOf(const StateSegment& s) const {
    return {blocks.data() + s.first_block, s.block_count};
  }
};

// `reservation_bases`: the bases of expandable reservations (sorted or not); gaps between
// mapped runs of one reservation become unmapped pseudo-segments (at most `max_gap` bytes
// are shown of each; the rest is named in its size).
AllocatorState classifyState(const std::vector<sim::SegmentView>& segments, std::uint32_t event,
                             std::span<const std::uint64_t> reservation_bases = {}, std::uint64_t max_gap = 0);

}  // namespace reservoir::gui
