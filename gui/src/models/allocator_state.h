// The allocator's state at one event, as the state view shows it: each block classified
// (allocated, pending free, cached free, inactive split, unmapped pages of an expandable
// reservation), and what an empty_cache there returns and which segments stay pinned: the
// library's rule (replay::cacheAtEvent, the what-if report's at_peak), applied by applyCache.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "reservoir/replay/peak_explain.h"
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
  bool pinning = false;                        // live, in a segment the cache rule finds pinned
  static constexpr std::uint32_t kNoAllocationId = 0xffffffffu;
};

struct StateSegment {
  std::uint64_t address = 0, size = 0;
  std::uint64_t allocated = 0, free_bytes = 0;
  std::uint64_t stream = 0;
  bool is_large = true, expandable = false, unmapped_gap = false;
  bool pinned = false;          // the cache rule: free bytes here stay after an empty_cache
  std::uint64_t kept_free = 0;  // those bytes (partial pages of an expandable segment, or all its free bytes)
  std::uint32_t first_block = 0, block_count = 0;
};

struct AllocatorState {
  std::uint32_t event = 0;
  std::vector<StateSegment> segments;  // by address
  std::vector<StateBlock> blocks;
  std::int64_t reserved = 0, allocated = 0;
  // From the cache rule (applyCache); zero until then.
  bool cache_known = false;
  std::int64_t releasable = 0;       // what an empty_cache here returns
  std::int64_t pinned = 0;           // cached - releasable: what stays
  std::int64_t pinned_free = 0;      // the free bytes pinned segments keep
  std::size_t pinned_segments = 0;
  StackId typical_stack;             // the stack whose live blocks pin the most (when any)
  std::int64_t typical_stack_bytes = 0;
  [[nodiscard]] std::span<const StateBlock> blocksOf(const StateSegment& s) const {
    return {blocks.data() + s.first_block, s.block_count};
  }
};

// `reservation_bases`: the bases of expandable reservations (sorted or not); gaps between
// mapped runs of one reservation become unmapped pseudo-segments (at most `max_gap` bytes
// are shown of each; the rest is named in its size).
AllocatorState classifyState(const std::vector<sim::SegmentView>& segments, std::uint32_t event,
                             std::span<const std::uint64_t> reservation_bases = {}, std::uint64_t max_gap = 0);

// Takes what an empty_cache returns and what stays pinned from the library's analysis of the same
// state: the totals, each pinned segment's kept bytes, its live blocks marked as pinning.
void applyCache(AllocatorState& state, const replay::PeakAnalysis& cache);

// The state view's state at `event` of the baseline model: classified, with the cache rule applied.
AllocatorState stateAtEvent(const replay::ModelStage& stage, std::uint32_t event, std::uint64_t max_gap = 0);

}  // namespace reservoir::gui
