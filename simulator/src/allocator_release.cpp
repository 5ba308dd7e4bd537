// Giving memory back: garbage collection, the release-and-retry paths of a failing malloc,
// empty_cache (release_cached_blocks), and synchronize_and_free_events.
#include <algorithm>

#include "allocator_impl.h"

namespace reservoir::sim {

void CachingAllocator::Impl::garbageCollectCachedBlocks() {
  const auto gc_threshold =
      static_cast<ByteCount>(config.garbage_collection_threshold * static_cast<double>(*allowed_memory_maximum));
  if (total_allocated_memory <= gc_threshold) return;
  const ByteCount target = total_allocated_memory - gc_threshold;
  ByteCount reclaimed = 0;
  BlockPool& large = pools[0];
  auto age = [&](BlockRef b) {
    return static_cast<std::size_t>(static_cast<int>(large.get_free_blocks_call_count - arena[b].gc_count_base));
  };
  std::size_t total_age = 0;
  int freeable = 0;
  large.blocks.forEach([&](const SizeKey& k) {
    if (!arena[k.ref].isSplit()) {
      total_age += age(k.ref);
      ++freeable;
    }
  });
  if (freeable == 0) return;
  bool block_freed = true;
  std::vector<BlockRef> doomed;
  while (reclaimed < target && block_freed && freeable > 0) {
    const double age_threshold = static_cast<double>(total_age) / freeable;
    block_freed = false;
    // A round does not stop at the target; releasing does not change the others' ages, so
    // collecting first and releasing in order is the same as releasing while walking.
    doomed.clear();
    large.blocks.forEach([&](const SizeKey& k) {
      if (!arena[k.ref].isSplit() && arena[k.ref].expandable == kNil &&
          static_cast<double>(age(k.ref)) >= age_threshold)
        doomed.push_back(k.ref);
    });
    for (BlockRef b : doomed) {
      block_freed = true;
      reclaimed += arena[b].size;
      total_age -= age(b);
      --freeable;
      releaseBlock(b);
    }
  }
}

// A block that can go back to the driver whole: a segment of its own, not part of an expandable
// one. torch does not ask whether an oversize block is split, because under a max_split_size set
// from the start none is (oversize blocks are never split). A what-if can still get one: a window's
// seed recorded without the setting, or expandable_segments turned on over cached plain segments
// (it splits any block). Releasing such a fragment would free a pointer the driver never handed
// out, so the model treats it like an expandable block: not releasable here.
bool CachingAllocator::Impl::releasableSegment(BlockRef b) const {
  return arena[b].expandable == kNil && !arena[b].isSplit();
}

bool CachingAllocator::Impl::releaseAvailableCachedBlocks(const AllocParams& p) {
  if (!config.maxSplitSet()) return false;
  BlockPool& pool = pools[p.pool];
  const auto& blocks = pool.blocks;
  const ByteCount key_size = std::max(p.size, config.max_split_size);
  auto it = blocks.lowerBound(SizeKey{p.stream, key_size, 0, kNil});
  if (it != blocks.end() && blocks.at(it).stream == p.stream && releasableSegment(blocks.at(it).ref)) {
    releaseBlock(blocks.at(it).ref);
    return true;
  }
  // No single block is large enough: free oversize blocks, largest first. The walk only reads
  // sizes, so the blocks are collected first and released in the same order.
  if (it == blocks.begin()) return false;
  ByteCount released = 0;
  std::vector<BlockRef> doomed;
  blocks.prev(it);
  while (released < key_size && blocks.at(it).size >= config.max_split_size && blocks.at(it).stream == p.stream) {
    const auto cur = it;
    const bool is_first = cur == blocks.begin();
    if (!is_first) blocks.prev(it);
    const BlockRef b = blocks.at(cur).ref;
    if (releasableSegment(b)) {
      released += arena[b].size;
      doomed.push_back(b);
    }
    if (is_first) break;
  }
  for (BlockRef b : doomed) releaseBlock(b);
  return released >= key_size;
}

bool CachingAllocator::Impl::releaseCachedBlocks(PoolId pool_id) {
  if (pool_id.isDefault() && captures_underway.empty()) {
    synchronizeAndFreeEvents();
    releaseBlocks(0);
    releaseBlocks(1);
  }
  for (auto it = pools_freeable.begin(); it != pools_freeable.end();) {
    if (!pool_id.isDefault()) {
      if (it->first == pool_id) {
        synchronizeAndFreeEvents(it->second);
      } else {
        ++it;
        continue;
      }
    }
    PrivatePool& pp = private_pools[it->second];
    releaseBlocks(pp.small);
    releaseBlocks(pp.large);
    if (pp.cuda_malloc_count == 0) {
      pp.live = false;
      pool_index.erase(it->first);
      it = pools_freeable.erase(it);
    } else {
      ++it;
    }
  }
  return true;
}

void CachingAllocator::Impl::releaseBlocks(std::uint32_t pool) {
  std::vector<BlockRef> to_release, to_unmap;
  pools[pool].blocks.forEach([&](const SizeKey& k) {
    if (arena[k.ref].expandable != kNil)
      to_unmap.push_back(k.ref);
    else if (!arena[k.ref].isSplit())
      to_release.push_back(k.ref);
  });
  for (BlockRef b : to_release) releaseBlock(b);
  for (BlockRef b : to_unmap) {
    unmapBlock(b);
    if (!arena[b].isSplit()) releaseExpandableSegment(b);
  }
}

void CachingAllocator::Impl::releaseBlock(BlockRef b) {
  Block& blk = arena[b];
  if (blk.expandable != kNil || blk.isSplit()) {
    fail(blk.isSplit() ? "release_block of a split block" : "release_block of an expandable block");
    return;
  }
  stats.num_device_free++;
  emit(Action::kSegmentFree, blk.ptr, blk.size, blk.stream, blk.segment_tag, blk.pool);
  device->cudaFree(blk.ptr, blk.size);
  total_allocated_memory -= blk.size;
  const std::uint32_t owner = pools[blk.pool].owner;
  if (owner != kNil) private_pools[owner].cuda_malloc_count--;
  const auto sz = static_cast<std::int64_t>(blk.size);
  const std::size_t t = statType(blk.pool);
  poolDecrease(stats.segment, t, 1);
  poolDecrease(stats.reserved_bytes, t, sz);
  if (blk.size >= config.max_split_size) stats.oversize_segments.decrease(1);
  eraseFromBlocks(b);
  deleteBlock(b);
}

void CachingAllocator::Impl::synchronizeAndFreeEvents(std::uint32_t only_private_pool) {
  stats.num_sync_all_streams++;
  insertEventsDeferredUntilNoCapture();
  if (outstanding.empty()) return;
  scratch_indices.clear();
  device->syncOrder(outstanding, scratch_indices);
  std::vector<std::size_t> order;
  for (std::size_t i : scratch_indices) {
    if (only_private_pool != kNil && pools[arena[outstanding_blocks[i]].pool].owner != only_private_pool) continue;
    order.push_back(i);
  }
  retireEvents(order);
}

void CachingAllocator::Impl::unmapBlock(BlockRef b) {
  ExpandableSegment& es = segments_es[arena[b].expandable];
  const Addr start = arena[b].ptr;
  const Addr end = start + arena[b].size;
  const ByteCount begin_page = (start - es.base + es.page - 1) / es.page;  // segmentRight
  const ByteCount end_page = (end - es.base) / es.page;                    // segmentLeft
  if (begin_page >= end_page) return;
  const Addr unmapped_ptr = es.base + begin_page * es.page;
  const ByteCount unmapped_size = (end_page - begin_page) * es.page;
  device->unmapPages(unmapped_ptr, unmapped_size);
  for (ByteCount i = begin_page; i < end_page; ++i) es.mapped[i] = false;
  eraseFromBlocks(b);
  const std::uint32_t pool = arena[b].pool;
  const ByteCount before_size = unmapped_ptr - start;
  if (before_size > 0) {
    const BlockRef before = newBlock(arena[b].stream, before_size, pool, start);
    arena[before].expandable = arena[b].expandable;
    splice(before, arena[b].prev, b);
    insertIntoBlocks(before);
  }
  const ByteCount after_size = arena[b].size - (before_size + unmapped_size);
  if (after_size > 0) {
    const BlockRef after = newBlock(arena[b].stream, after_size, pool, unmapped_ptr + unmapped_size);
    arena[after].expandable = arena[b].expandable;
    splice(after, b, arena[b].next);
    insertIntoBlocks(after);
  }
  arena[b].ptr = unmapped_ptr;
  arena[b].size = unmapped_size;
  arena[b].mapped = false;
  tryMergeBlocks(b, arena[b].prev, pool);
  tryMergeBlocks(b, arena[b].next, pool);
  pools[pool].unmapped.insert(addrKey(b));
  total_allocated_memory -= unmapped_size;
  poolDecrease(stats.reserved_bytes, statType(pool), static_cast<std::int64_t>(unmapped_size));
  const std::uint32_t owner = pools[pool].owner;
  if (owner != kNil) private_pools[owner].cuda_malloc_count--;
  stats.num_device_free++;
  emit(Action::kSegmentUnmap, unmapped_ptr, unmapped_size, arena[b].stream, arena[b].segment_tag, pool);
}

void CachingAllocator::Impl::releaseExpandableSegment(BlockRef b) {
  ExpandableSegment& es = segments_es[arena[b].expandable];
  if (arena[b].size != es.size() || arena[b].mapped) fail("release_expandable_segment: block disagrees with segment");
  pools[arena[b].pool].unmapped.erase(addrKey(b));
  device->releaseAddress(es.base, es.size());
  es.live = false;
  es.mapped.clear();
  deleteBlock(b);
}

}  // namespace reservoir::sim
