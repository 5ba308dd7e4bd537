// A periodic run's state repeating itself: the model at one period boundary compared with its
// copy one period earlier (CachingAllocator::repeatOf), and the state advanced by whole periods
// without replaying them (CachingAllocator::advance).
//
// A state repeats when the two differ only as the next period would move them on: segments below
// an address moved down by one step (the driver places new segments below all others), the rest
// stayed; an allocation made one period later carries a tag one step higher; the counters grew.
// The model's decisions depend on addresses only through their order and offsets within a
// segment, so such a state goes on as the earlier one did, moved the same way once more.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "reservoir/simulator/stats.h"

namespace reservoir::sim {

// How addresses move from one period to the next: those below `below` (now) `step` lower, the
// rest where they were. The one rule for the allocator's blocks, the device's segments and the
// driver's chunks.
struct AddressStep {
  std::uint64_t below = 0;
  std::uint64_t step = 0;
  // The address one period before of what is at `now`.
  [[nodiscard]] std::uint64_t earlier(std::uint64_t now) const { return now < below ? now + step : now; }
  // Where what is at `now` is `periods` periods on.
  [[nodiscard]] std::uint64_t on(std::uint64_t now, std::uint64_t periods) const {
    return now < below ? now - step * periods : now;
  }
};

struct RepeatRules {
  AddressStep addresses;
  std::uint64_t tag_step = 0;  // one period's allocations (tags of allocations made in it)
  // Whether the outstanding event of allocation `now_tag` completes one period after that of
  // `earlier_tag` did (the caller's completion model).
  std::function<bool(std::uint64_t now_tag, std::uint64_t earlier_tag)> completes_a_period_later;
};

// How one period changed the state (CachingAllocator::repeatOf): per live block, the earlier
// block it stands for and how its tags and free-age count moved; the addresses' rule; the
// counters' growth.
struct Repeat {
  struct BlockStep {
    std::uint32_t now = 0, earlier = 0;  // block indices (BlockHandle::index)
    std::int64_t tag = 0, segment_tag = 0, gc_base = 0;
  };
  std::vector<BlockStep> blocks;
  AddressStep addresses;
  std::vector<std::int64_t> pool_calls;  // per pool: get_free_blocks calls
  std::int64_t event_sequence = 0;
  std::uint64_t tag_step = 0;  // outstanding events' tags
  DeviceStats counters;        // cumulative figures' growth (allocated, freed, num_*); current and peak 0
  // By block index of the later state: the earlier state's block it stands for (~0u: none).
  std::vector<std::uint32_t> earlier_of;
};

}  // namespace reservoir::sim
