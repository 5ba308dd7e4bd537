// Expandable segments: one virtual reservation per (pool, stream), grown by mapping pages.
#include <algorithm>

#include "allocator_impl.h"

namespace reservoir::sim {

void CachingAllocator::Impl::splice(BlockRef b, BlockRef before, BlockRef after) {
  if (before != kNil) arena[before].next = b;
  arena[b].prev = before;
  if (after != kNil) arena[after].prev = b;
  arena[b].next = after;
}

BlockRef CachingAllocator::Impl::findExpandableBlock(StreamId stream, std::uint32_t pool, ByteCount size) {
  auto allocatable = [&](BlockRef b) {
    return b != kNil && !arena[b].allocated && arena[b].event_count == 0 && arena[b].stream_uses.empty();
  };
  auto has_space = [&](BlockRef b) {
    ByteCount bytes = 0;
    while (bytes < size && allocatable(b)) {
      bytes += arena[b].size;
      b = arena[b].next;
    }
    return bytes >= size;
  };
  BlockPool& bp = pools[pool];
  for (auto it = bp.unmapped.lowerBound(AddrKey{stream, 0, kNil});
       it != bp.unmapped.end() && bp.unmapped.at(it).stream == stream; bp.unmapped.next(it)) {
    BlockRef c = bp.unmapped.at(it).ref;
    if (allocatable(arena[c].prev)) c = arena[c].prev;
    if (has_space(c)) return c;
  }
  ExpandableSegment es;
  es.page = bp.is_small ? kSmallBuffer : config.large_segment_size;
  // The reservation: 9/8 of the device, or expandable_segments_reserve capped at that. One
  // allocation cannot span segments, so a request larger than a whole new segment fails
  // (through the usual release-and-retry and oom path) without reserving anything.
  const ByteCount reserve = std::min(config.expandableReserve(device->totalMemory()), kMaxReservation);
  es.max_handles = static_cast<std::size_t>(reserve / es.page + (reserve % es.page != 0));
  if (es.size() < size) return kNil;
  es.base = device->reserveAddress(es.size(), es.page, stream);
  es.mapped.assign(es.max_handles, false);
  es.stream = stream;
  es.live = true;
  segments_es.push_back(std::move(es));
  const BlockRef candidate = newBlock(stream, segments_es.back().size(), pool, segments_es.back().base);
  arena[candidate].mapped = false;
  arena[candidate].expandable = static_cast<std::uint32_t>(segments_es.size() - 1);
  bp.unmapped.insert(addrKey(candidate));
  return candidate;
}

bool CachingAllocator::Impl::mapBlock(BlockRef to_map, ByteCount size, std::uint64_t tag) {
  ExpandableSegment& es = segments_es[arena[to_map].expandable];
  const Addr ptr = arena[to_map].ptr;
  const ByteCount begin = (ptr - es.base) / es.page;                     // segmentLeft
  const ByteCount end = (ptr + size - es.base + es.page - 1) / es.page;  // segmentRight
  if (begin == end) return false;
  const Addr mapped_ptr = es.base + begin * es.page;
  const ByteCount mapped_size = (end - begin) * es.page;
  if (mapped_ptr != ptr) fail("map_block: block not aligned to its segment's pages");
  if (!device->mapPages(mapped_ptr, mapped_size, arena[to_map].stream)) return false;
  for (ByteCount i = begin; i < end; ++i) es.mapped[i] = true;
  const std::uint32_t pool = arena[to_map].pool;
  pools[pool].unmapped.erase(addrKey(to_map));
  arena[to_map].mapped = true;
  if (mapped_size < arena[to_map].size) {
    const BlockRef remaining =
        newBlock(arena[to_map].stream, arena[to_map].size - mapped_size, pool, arena[to_map].ptr + mapped_size);
    arena[remaining].mapped = false;
    arena[remaining].expandable = arena[to_map].expandable;
    splice(remaining, to_map, arena[to_map].next);
    pools[pool].unmapped.insert(addrKey(remaining));
    arena[to_map].size = mapped_size;
  }
  tryMergeBlocks(to_map, arena[to_map].prev, pool);
  tryMergeBlocks(to_map, arena[to_map].next, pool);
  insertIntoBlocks(to_map);
  total_allocated_memory += mapped_size;
  poolIncrease(stats.reserved_bytes, statType(pool), static_cast<std::int64_t>(mapped_size));
  stats.num_device_alloc++;
  if (arena[to_map].prev == kNil && arena[to_map].segment_tag == 0) arena[to_map].segment_tag = tag;
  emit(Action::kSegmentMap, mapped_ptr, mapped_size, arena[to_map].stream, tag, pool);
  return true;
}

BlockRef CachingAllocator::Impl::tryAllocateExpandableBlock(StreamId stream, std::uint32_t pool, ByteCount size,
                                                            std::uint64_t tag) {
  BlockRef candidate = findExpandableBlock(stream, pool, size);
  if (candidate == kNil) return kNil;
  if (!arena[candidate].mapped && !mapBlock(candidate, std::min(arena[candidate].size, size), tag)) return kNil;
  while (arena[candidate].size < size) {
    const ByteCount remaining = size - arena[candidate].size;
    const BlockRef next = arena[candidate].next;
    if (!mapBlock(next, std::min(remaining, arena[next].size), tag)) return kNil;
    candidate = next;
  }
  eraseFromBlocks(candidate);
  return candidate;
}

}  // namespace reservoir::sim
