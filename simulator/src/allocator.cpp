// malloc / free: the allocation path of the model (CUDACachingAllocator.cpp's malloc,
// get_free_block, alloc_block, alloc_found_block, free, free_block, process_events).
#include <algorithm>

#include "allocator_impl.h"

namespace reservoir::sim {

CachingAllocator::Impl::Impl(AllocatorConfig c, DeviceModel* d, EventSink* s)
    : config(std::move(c)), device(d), sink(s) {
  pools.resize(2);
  pools[1].is_small = true;
  stats.max_split_size = config.maxSplitSet() ? static_cast<std::int64_t>(config.max_split_size) : -1;
  if (config.per_process_memory_fraction) {
    const double f = *config.per_process_memory_fraction;
    if (f < 1.0) allowed_memory_maximum = static_cast<ByteCount>(f * static_cast<double>(device->totalMemory()));
  }
}

BlockRef CachingAllocator::Impl::newBlock(StreamId stream, ByteCount size, std::uint32_t pool, Addr ptr) {
  BlockRef b;
  if (!free_slots.empty()) {
    b = free_slots.back();
    free_slots.pop_back();
  } else {
    b = static_cast<BlockRef>(arena.size());
    arena.emplace_back();
  }
  Block& blk = arena[b];
  std::vector<StreamId> uses = std::move(blk.stream_uses);  // empty; its capacity is reused
  blk = Block{};
  blk.stream_uses = std::move(uses);
  blk.stream = stream;
  blk.size = size;
  blk.pool = pool;
  blk.ptr = ptr;
  blk.live = true;
  return b;
}

void CachingAllocator::Impl::deleteBlock(BlockRef b) {
  arena[b].live = false;
  arena[b].stream_uses.clear();
  free_slots.push_back(b);
}

void CachingAllocator::Impl::insertIntoBlocks(BlockRef b) {
  BlockPool& pool = pools[arena[b].pool];
  arena[b].gc_count_base = pool.get_free_blocks_call_count;
  const bool inserted = pool.blocks.insert(sizeKey(b));
  if (!inserted) fail("insert_into_blocks: block already in its free list");
}

void CachingAllocator::Impl::replaceInBlocks(FreeCursor at, BlockRef b) {
  BlockPool& pool = pools[arena[b].pool];
  arena[b].gc_count_base = pool.get_free_blocks_call_count;
  if (!pool.blocks.replace(at, sizeKey(b))) fail("insert_into_blocks: block already in its free list");
}

void CachingAllocator::Impl::eraseFromBlocks(BlockRef b) {
  if (pools[arena[b].pool].blocks.erase(sizeKey(b)) != 1) fail("erase: block not in its free list");
}

PoolId CachingAllocator::Impl::poolIdOf(std::uint32_t pool) const {
  const std::uint32_t owner = pools[pool].owner;
  return owner == kNil ? PoolId{} : private_pools[owner].id;
}

void CachingAllocator::Impl::emitTo(Action action, Addr addr, ByteCount size, StreamId stream, std::uint64_t tag,
                                    std::uint32_t pool) {
  sink->onEvent(SimEvent{action, addr, size, stream, tag, poolIdOf(pool)});
}

// ---------------------------------------------------------------- lookup

std::uint32_t CachingAllocator::Impl::getPool(ByteCount size, StreamId stream) const {
  for (auto it = captures_underway.rbegin(); it != captures_underway.rend(); ++it) {
    if (it->only_stream && *it->only_stream != stream) continue;
    const auto found = pool_index.find(it->pool);
    if (found == pool_index.end()) continue;
    const PrivatePool& pp = private_pools[found->second];
    return size <= kSmallSize ? pp.small : pp.large;
  }
  return size <= kSmallSize ? 1u : 0u;
}

FreeBlockFound CachingAllocator::Impl::findFreeBlock(const AllocParams& p) const {
  const auto& blocks = pools[p.pool].blocks;
  auto it = blocks.lowerBound(SizeKey{p.stream, p.size, 0, kNil});
  const auto end = blocks.end();
  if (it == end || blocks.at(it).stream != p.stream) return {};
  if (arena[blocks.at(it).ref].expandable != kNil) {
    if (p.expandable_active) {
      // Among fitting expandable blocks, prefer the first whose size plus the unmapped
      // space after it is a local minimum (torch avoids growing the segment's tail).
      auto expandable_size = [&](BlockRef b) {
        const Block& blk = arena[b];
        return blk.size + (blk.next != kNil && !arena[blk.next].mapped ? arena[blk.next].size : 0);
      };
      auto next = it;
      blocks.next(next);
      while (arena[blocks.at(it).ref].expandable != kNil && next != end && blocks.at(next).stream == p.stream &&
             expandable_size(blocks.at(next).ref) < expandable_size(blocks.at(it).ref)) {
        it = next;
        blocks.next(next);
      }
    } else {
      do {
        blocks.next(it);
      } while (it != end && arena[blocks.at(it).ref].expandable != kNil && blocks.at(it).stream == p.stream);
      if (it == end || blocks.at(it).stream != p.stream) return {};
    }
  }
  const SizeKey& k = blocks.at(it);
  const ByteCount max_split = config.max_split_size;
  if (p.size < max_split && k.size >= max_split) return {};
  if (p.size >= max_split && k.size >= p.size + config.max_non_split_rounding_size) return {};
  return {k.ref, it};
}

bool CachingAllocator::Impl::getFreeBlock(AllocParams& p) {
  BlockPool& pool = pools[p.pool];
  if (allowed_memory_maximum && config.garbage_collection_threshold > 0) ++pool.get_free_blocks_call_count;
  const FreeBlockFound found = findFreeBlock(p);
  if (found.ref == kNil) return false;
  p.block = found.ref;
  p.listed = true;  // taken out of the list by allocFoundBlock
  p.at = found.at;
  return true;
}

bool CachingAllocator::Impl::shouldSplit(BlockRef block, ByteCount size, bool expandable_active) const {
  const Block& b = arena[block];
  const std::uint32_t owner = pools[b.pool].owner;
  if (owner != kNil && private_pools[owner].no_split) return false;
  const ByteCount remaining = b.size - size;
  if (pools[b.pool].is_small || expandable_active) return remaining >= kMinBlockSize;
  return size < config.max_split_size && remaining > kSmallSize;
}

// ---------------------------------------------------------------- malloc

MallocResult CachingAllocator::Impl::malloc(ByteCount orig_size, StreamId stream, std::uint64_t tag) {
  // During a capture c10 polls no events, except that graph_capture_record_stream_reuse
  // frees the blocks whose stream uses the capture has joined (the device model says which).
  if (captures_underway.empty() || config.graph_capture_record_stream_reuse) processEvents();
  AllocParams p;
  p.size = config.roundSize(orig_size);
  p.stream = stream;
  p.pool = getPool(p.size, stream);
  p.alloc_size = config.allocationSize(p.size);
  p.expandable_active = config.expandable_segments;  // no custom allocators are modelled
  p.tag = tag;

  bool found = getFreeBlock(p);
  if (!found) {
    if (allowed_memory_maximum && config.garbage_collection_threshold > 0) garbageCollectCachedBlocks();
    found = allocBlock(p, false) ||
            (!p.rejected && (tryMempoolFallback(p) || (releaseAvailableCachedBlocks(p) && allocBlock(p, false)) ||
                             (captures_underway.empty() && releaseCachedBlocks(PoolId{}) && allocBlock(p, true))));
  }
  if (!found) {
    emit(Action::kOom, device->deviceFree(), p.size, stream, tag, p.pool);
    stats.num_ooms += 1;
    afterOperation("malloc (oom)");
    return {};
  }
  const bool split = shouldSplit(p.block, p.size, p.expandable_active);
  const BlockRef b = allocFoundBlock(p, orig_size, split);
  afterOperation("malloc");
  return MallocResult{BlockHandle{b}, arena[b].ptr, arena[b].size};
}

BlockRef CachingAllocator::Impl::cachedBlockAt(Addr addr) const {
  // A linear search: checkpoint restores are rare (a CUDA-graph tree changing path).
  for (const BlockPool& pool : pools)
    for (auto c = pool.blocks.begin(); c != pool.blocks.end(); pool.blocks.next(c))
      if (pool.blocks.at(c).ptr == addr) return pool.blocks.at(c).ref;
  return kNil;
}

MallocResult CachingAllocator::Impl::mallocAt(Addr addr, ByteCount size, std::uint64_t tag) {
  const BlockRef found = cachedBlockAt(addr);
  if (found == kNil || arena[found].size < size) return {};
  eraseFromBlocks(found);
  AllocParams p;
  p.size = size;
  p.stream = arena[found].stream;
  p.pool = arena[found].pool;
  p.block = found;
  p.tag = tag;
  const BlockRef b = allocFoundBlock(p, size, arena[found].size > size);
  afterOperation("malloc at a checkpoint's block");
  return MallocResult{BlockHandle{b}, arena[b].ptr, arena[b].size};
}

bool CachingAllocator::Impl::allocBlock(AllocParams& p, bool is_retry) {
  const ByteCount size = p.alloc_size;
  if (is_retry) stats.num_alloc_retries += 1;
  if (allowed_memory_maximum && total_allocated_memory + size > *allowed_memory_maximum) {
    // throw_on_cudamalloc_oom: rejected before the driver is asked, without the retry chain.
    p.rejected = config.throw_on_cudamalloc_oom;
    return false;
  }
  const std::uint32_t owner = pools[p.pool].owner;
  if (p.expandable_active) {
    p.block = tryAllocateExpandableBlock(p.stream, p.pool, p.size, p.tag);
    if (p.block == kNil) return false;
    p.listed = false;
    if (owner != kNil) private_pools[owner].cuda_malloc_count++;
    return true;
  }
  const auto ptr = device->cudaMalloc(size, p.stream);
  if (!ptr) return false;
  p.listed = false;
  if (owner != kNil) private_pools[owner].cuda_malloc_count++;
  total_allocated_memory += size;
  p.block = newBlock(p.stream, size, p.pool, *ptr);
  arena[p.block].segment_tag = p.tag;
  const std::size_t t = statType(p.pool);
  poolIncrease(stats.segment, t, 1);
  poolIncrease(stats.reserved_bytes, t, static_cast<std::int64_t>(size));
  if (size >= config.max_split_size) stats.oversize_segments.increase(1);
  stats.num_device_alloc++;
  emit(Action::kSegmentAlloc, *ptr, size, p.stream, p.tag, p.pool);
  return true;
}

bool CachingAllocator::Impl::tryMempoolFallback(AllocParams& p) {
  if (pools[p.pool].owner != kNil) return false;
  for (const PoolId& id : use_on_oom_pools) {
    const auto found = pool_index.find(id);
    if (found == pool_index.end()) continue;
    const PrivatePool& pp = private_pools[found->second];
    AllocParams mp = p;
    mp.pool = p.size <= kSmallSize ? pp.small : pp.large;
    mp.expandable_active = false;
    if (getFreeBlock(mp)) {
      p = mp;
      return true;
    }
  }
  return false;
}

BlockRef CachingAllocator::Impl::allocFoundBlock(const AllocParams& p, ByteCount orig_size, bool split) {
  BlockRef block = p.block;
  const bool already_split = arena[block].isSplit();
  const bool expandable = arena[block].expandable != kNil;
  if (split) {
    const BlockRef remaining = block;
    block = newBlock(p.stream, p.size, p.pool, arena[remaining].ptr);
    Block& nb = arena[block];
    Block& rb = arena[remaining];
    nb.expandable = rb.expandable;
    nb.prev = rb.prev;
    if (nb.prev != kNil) arena[nb.prev].next = block;
    nb.next = remaining;
    rb.prev = block;
    rb.ptr += p.size;
    rb.size -= p.size;
    if (p.listed) {
      replaceInBlocks(p.at, remaining);
    } else {
      insertIntoBlocks(remaining);
    }
    if (already_split && !expandable) {
      poolDecrease(stats.inactive_split_bytes, statType(p.pool), static_cast<std::int64_t>(p.size));
    } else if (!expandable) {
      const auto rem = static_cast<std::int64_t>(arena[remaining].size);
      const std::size_t t = statType(p.pool);
      poolIncrease(stats.inactive_split_bytes, t, rem);
      poolIncrease(stats.inactive_split, t, 1);
    }
  } else if (p.listed) {
    pools[p.pool].blocks.erase(p.at);
  }
  if (!split && already_split && !expandable) {
    const auto sz = static_cast<std::int64_t>(arena[block].size);
    const std::size_t t = statType(p.pool);
    poolDecrease(stats.inactive_split_bytes, t, sz);
    poolDecrease(stats.inactive_split, t, 1);
  }
  Block& b = arena[block];
  b.allocated = true;
  b.requested_size = orig_size;
  b.tag = p.tag;
  emit(Action::kAlloc, b.ptr, orig_size, b.stream, p.tag, b.pool);
  ++active_count;
  const auto sz = static_cast<std::int64_t>(b.size);
  const std::size_t t = statType(b.pool);
  poolIncrease(stats.allocation, t, 1);
  poolIncrease(stats.allocated_bytes, t, sz);
  poolIncrease(stats.active, t, 1);
  poolIncrease(stats.active_bytes, t, sz);
  poolIncrease(stats.requested_bytes, t, static_cast<std::int64_t>(orig_size));
  if (b.size >= config.max_split_size) stats.oversize_allocations.increase(1);
  return block;
}

// ---------------------------------------------------------------- free

void CachingAllocator::Impl::free(BlockRef block) {
  Block& b = arena[block];
  if (!b.live || !b.allocated) {
    fail("free of a block that is not allocated");
    return;
  }
  b.allocated = false;
  const auto sz = static_cast<std::int64_t>(b.size);
  const std::size_t t = statType(b.pool);
  poolDecrease(stats.allocation, t, 1);
  poolDecrease(stats.allocated_bytes, t, sz);
  emit(Action::kFreeRequested, b.ptr, b.requested_size, b.stream, b.tag, b.pool);
  if (b.size >= config.max_split_size) stats.oversize_allocations.decrease(1);
  if (!b.stream_uses.empty()) {
    if (!captures_underway.empty() && !config.graph_capture_record_stream_reuse) {
      deferred_blocks.push_back(block);  // completes after the capture
    } else {
      insertEvents(block);
    }
  } else {
    freeBlock(block);
  }
  afterOperation("free");
}

void CachingAllocator::Impl::insertEvents(BlockRef block) {
  Block& b = arena[block];  // the arena does not grow here
  for (StreamId s : b.stream_uses) {
    b.event_count++;
    outstanding.push_back(OutstandingEvent{s, b.stream, b.ptr, b.tag, event_sequence++});
    outstanding_blocks.push_back(block);
  }
  b.stream_uses.clear();  // keeps its capacity for the block's next record_stream
}

void CachingAllocator::Impl::freeBlock(BlockRef block) {
  Block& b0 = arena[block];
  emit(Action::kFreeCompleted, b0.ptr, b0.requested_size, b0.stream, b0.tag, b0.pool);
  const ByteCount original_size = b0.size;
  const ByteCount requested = b0.requested_size;
  const std::uint32_t pool = b0.pool;
  std::int64_t net_blocks = 0, net_size = 0;
  const BlockRef candidates[2] = {b0.prev, b0.next};
  HeldEntry hold;
  for (BlockRef c : candidates) {
    const ByteCount subsumed = tryMergeBlocks(block, c, pool, &hold);
    if (subsumed > 0) {
      net_blocks -= 1;
      net_size -= static_cast<std::int64_t>(subsumed);
    }
  }
  --active_count;
  if (hold.held) {
    if (hold.moved) hold.at = pools[pool].blocks.find(hold.key);
    replaceInBlocks(hold.at, block);
  } else {
    insertIntoBlocks(block);
  }
  const Block& b = arena[block];
  if (b.isSplit()) {
    net_blocks += 1;
    net_size += static_cast<std::int64_t>(b.size);
  }
  const bool expandable = b.expandable != kNil;
  const std::size_t t = statType(pool);
  if (!expandable) {
    if (net_blocks > 0)
      poolIncrease(stats.inactive_split, t, net_blocks);
    else if (net_blocks < 0)
      poolDecrease(stats.inactive_split, t, -net_blocks);
    if (net_size > 0)
      poolIncrease(stats.inactive_split_bytes, t, net_size);
    else if (net_size < 0)
      poolDecrease(stats.inactive_split_bytes, t, -net_size);
  }
  poolDecrease(stats.active, t, 1);
  poolDecrease(stats.active_bytes, t, static_cast<std::int64_t>(original_size));
  poolDecrease(stats.requested_bytes, t, static_cast<std::int64_t>(requested));
}

void CachingAllocator::Impl::eraseMergedNeighbour(BlockRef src, std::uint32_t pool, HeldEntry* hold) {
  auto& blocks = pools[pool].blocks;
  const SizeKey key = sizeKey(src);
  if (hold && !hold->held) {
    const FreeCursor at = blocks.find(key);
    if (at == blocks.end()) {
      fail("merge: neighbour not in its free list");
    } else {
      *hold = HeldEntry{true, false, key, at};
    }
    return;
  }
  if (blocks.erase(key) != 1) {
    fail("merge: neighbour not in its free list");
  } else if (hold) {
    hold->moved = true;
  }
}

ByteCount CachingAllocator::Impl::tryMergeBlocks(BlockRef dst, BlockRef src, std::uint32_t pool, HeldEntry* hold) {
  if (src == kNil) return 0;
  Block& s = arena[src];
  Block& d = arena[dst];
  if (s.allocated || s.event_count > 0 || !s.stream_uses.empty() || d.mapped != s.mapped) return 0;
  // src leaves its set with the key it was inserted under.
  if (s.mapped) {
    eraseMergedNeighbour(src, pool, hold);
  } else {
    if (pools[pool].unmapped.erase(addrKey(src)) != 1) fail("merge: neighbour not in the unmapped list");
  }
  if (d.prev == src) {
    d.ptr = s.ptr;
    d.prev = s.prev;
    if (d.prev != kNil) arena[d.prev].next = dst;
    d.segment_tag = s.segment_tag;
  } else {
    d.next = s.next;
    if (d.next != kNil) arena[d.next].prev = dst;
  }
  const ByteCount subsumed = s.size;
  d.size += subsumed;
  deleteBlock(src);
  return subsumed;
}

// ---------------------------------------------------------------- events

void CachingAllocator::Impl::retireEvents(const std::vector<std::size_t>& indices) {
  std::vector<bool>& gone = scratch_gone;
  gone.assign(outstanding.size(), false);
  for (std::size_t i : indices) {
    if (i >= outstanding.size() || gone[i]) {
      fail("event retired twice or out of range");
      continue;
    }
    gone[i] = true;
    const BlockRef b = outstanding_blocks[i];
    if (--arena[b].event_count == 0) freeBlock(b);
  }
  std::size_t w = 0;
  for (std::size_t r = 0; r < outstanding.size(); ++r) {
    if (gone[r]) continue;
    outstanding[w] = outstanding[r];
    outstanding_blocks[w] = outstanding_blocks[r];
    ++w;
  }
  outstanding.resize(w);
  outstanding_blocks.resize(w);
}

void CachingAllocator::Impl::insertEventsDeferredUntilNoCapture() {
  if (deferred_blocks.empty()) return;
  std::vector<BlockRef> blocks;
  blocks.swap(deferred_blocks);
  for (BlockRef b : blocks) {
    insertEvents(b);
    if (arena[b].event_count == 0) freeBlock(b);
  }
}

void CachingAllocator::Impl::processEvents() {
  insertEventsDeferredUntilNoCapture();
  if (outstanding.empty()) return;
  scratch_indices.clear();
  device->pollEvents(outstanding, scratch_indices);
  if (!scratch_indices.empty()) {
    retireEvents(scratch_indices);  // retiring frees blocks, which polls nothing
  }
}

}  // namespace reservoir::sim
