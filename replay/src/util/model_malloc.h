// One malloc of a replayed program on the model, as every replay of the program makes it: a
// checkpoint restore's block at its address (the recorded one) when the model has a cached block
// there, else the allocator's own choice, routed to the op's private pool when it has one.
#pragma once

#include <cstdint>
#include <optional>

#include "reservoir/simulator/allocator.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::replay::detail {

inline sim::MallocResult modelMalloc(sim::CachingAllocator& model, sim::ByteCount size, sim::StreamId stream,
                                     std::uint64_t tag, const std::optional<traces::PoolId>& pool,
                                     std::optional<sim::Addr> restore_at) {
  if (restore_at) {
    const auto placed = model.mallocAt(*restore_at, size, tag);
    if (placed.ok()) return placed;
  }
  if (pool) model.beginAllocateToPool(sim::PoolRouting{*pool, std::nullopt});
  const auto res = model.malloc(size, stream, tag);
  if (pool) {
    model.endAllocateToPool(*pool);
    model.releasePool(*pool);
  }
  return res;
}

// One empty_cache of a replayed program: a pool released just before it is made freeable first
// (Program's OpRoute on the op), and a pool's own empty_cache empties that pool alone.
inline void modelEmptyCache(sim::CachingAllocator& model, const std::optional<traces::PoolId>& released,
                            bool pool_only) {
  if (released) model.releasePool(*released);
  if (released && pool_only)
    model.emptyCache(*released);
  else
    model.emptyCache();
}

}  // namespace reservoir::replay::detail
