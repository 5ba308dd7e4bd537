// Invariant checks in tiers. Cheap ones (a freed block must be allocated, a set operation must
// find its key) run always and record the first failure; the whole-pool validation below runs
// after every operation when the expensive tier is enabled (and compiled in).
#include <fmt/format.h>

#include <map>

#include "allocator_impl.h"

namespace reservoir::sim {

void CachingAllocator::Impl::fail(std::string message) {
  if (invariant_failure.empty()) invariant_failure = std::move(message);
}

void CachingAllocator::Impl::afterOperation(const char* what) {
#ifdef RESERVOIR_EXPENSIVE_CHECKS
  if (check_level == CheckLevel::kExpensive && invariant_failure.empty()) {
    std::string problem = validate();
    if (!problem.empty()) fail(fmt::format("after {}: {}", what, problem));
  }
#else
  (void)what;
#endif
}

namespace {

struct Recount {
  std::int64_t reserved = 0, allocated = 0, active = 0, requested = 0, segments = 0;
};

}  // namespace

std::string CachingAllocator::Impl::validate() const {
  // Every free-list key must match its block, and every free mapped block must be listed.
  std::size_t listed = 0;
  std::string problem;
  for (std::uint32_t p = 0; p < pools.size(); ++p) {
    pools[p].blocks.forEach([&](const SizeKey& k) {
      const Block& b = arena[k.ref];
      if (problem.empty() && (!b.live || b.allocated || !b.mapped || b.pool != p || b.size != k.size ||
                              b.ptr != k.ptr || b.stream != k.stream))
        problem = fmt::format("free list of pool {} holds a stale key for block at {:#x}", p, k.ptr);
      ++listed;
    });
    pools[p].unmapped.forEach([&](const AddrKey& k) {
      const Block& b = arena[k.ref];
      if (problem.empty() && (!b.live || b.mapped || b.ptr != k.ptr))
        problem = fmt::format("unmapped list holds a stale key at {:#x}", k.ptr);
    });
  }
  if (!problem.empty()) return problem;
  Recount rc;
  std::size_t free_mapped = 0;
  for (BlockRef r = 0; r < arena.size(); ++r) {
    const Block& b = arena[r];
    if (!b.live) continue;
    if (b.prev != kNil && (arena[b.prev].next != r || arena[b.prev].ptr + arena[b.prev].size != b.ptr))
      return fmt::format("block at {:#x}: broken prev link", b.ptr);
    if (b.next != kNil && (arena[b.next].prev != r || b.ptr + b.size != arena[b.next].ptr))
      return fmt::format("block at {:#x}: broken next link", b.ptr);
    const bool idle = !b.allocated && b.event_count == 0 && b.stream_uses.empty();
    if (idle && b.mapped) {
      ++free_mapped;
      for (BlockRef n : {b.prev, b.next}) {
        if (n == kNil) continue;
        const Block& nb = arena[n];
        if (nb.mapped && !nb.allocated && nb.event_count == 0 && nb.stream_uses.empty())
          return fmt::format("free blocks at {:#x} and {:#x} were not merged", b.ptr, nb.ptr);
      }
    }
    if (b.expandable != kNil) {
      const ExpandableSegment& es = segments_es[b.expandable];
      if (b.ptr < es.base || b.size > es.base + es.size() - b.ptr)
        return fmt::format("block at {:#x} (+{}) lies outside its expandable segment {:#x} (+{})", b.ptr, b.size,
                           es.base, es.size());
    }
    if (b.size % kMinBlockSize != 0)
      return fmt::format("block at {:#x} has size {} (not a multiple of 512)", b.ptr, b.size);
    if (b.mapped) rc.reserved += static_cast<std::int64_t>(b.size);
    if (b.allocated) rc.allocated += static_cast<std::int64_t>(b.size);
    if (b.allocated || b.event_count > 0) {
      rc.active += static_cast<std::int64_t>(b.size);
      rc.requested += static_cast<std::int64_t>(b.requested_size);
    }
  }
  if (free_mapped != listed) return fmt::format("{} free mapped blocks but {} free-list entries", free_mapped, listed);
  const StatTotals t = totals();
  if (rc.reserved != t.reserved)
    return fmt::format("reserved_bytes {} but the blocks add up to {}", t.reserved, rc.reserved);
  if (rc.allocated != t.allocated)
    return fmt::format("allocated_bytes {} but the blocks add up to {}", t.allocated, rc.allocated);
  if (rc.active != t.active) return fmt::format("active_bytes {} but the blocks add up to {}", t.active, rc.active);
  if (rc.requested != t.requested)
    return fmt::format("requested_bytes {} but the blocks add up to {}", t.requested, rc.requested);
  if (static_cast<std::int64_t>(total_allocated_memory) != rc.reserved)
    return fmt::format("total_allocated_memory {} != reserved {}", total_allocated_memory, rc.reserved);
  return {};
}

}  // namespace reservoir::sim
