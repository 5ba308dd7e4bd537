// Internal state of the allocator model. Names follow CUDACachingAllocator.cpp so the two can
// be read side by side; blocks live in an arena and are referred to by index.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ordered_set.h"
#include "reservoir/simulator/allocator.h"

namespace reservoir::sim {

using BlockRef = std::uint32_t;
inline constexpr BlockRef kNil = ~0u;

struct Block {
  StreamId stream = 0;
  ByteCount size = 0;
  ByteCount requested_size = 0;
  Addr ptr = 0;
  BlockRef prev = kNil;
  BlockRef next = kNil;
  std::uint32_t pool = 0;           // index into Impl::pools
  std::uint32_t expandable = kNil;  // index into Impl::segments_es, or kNil
  std::int32_t event_count = 0;
  std::int64_t gc_count_base = 0;
  std::uint64_t tag = 0;          // the allocation that last used this block
  std::uint64_t segment_tag = 0;  // the malloc that created the segment (head blocks)
  std::vector<StreamId> stream_uses;
  bool allocated = false;
  bool mapped = true;
  bool live = false;

  [[nodiscard]] bool isSplit() const { return prev != kNil || next != kNil; }
};

// Free-list key, ordered as BlockComparatorSize: (stream, size, address).
struct SizeKey {
  StreamId stream;
  ByteCount size;
  Addr ptr;
  BlockRef ref;
  bool operator<(const SizeKey& o) const {
    if (stream != o.stream) return stream < o.stream;
    if (size != o.size) return size < o.size;
    return ptr < o.ptr;
  }
};

// Unmapped-list key, ordered as BlockComparatorAddress: (stream, address).
struct AddrKey {
  StreamId stream;
  Addr ptr;
  BlockRef ref;
  bool operator<(const AddrKey& o) const {
    if (stream != o.stream) return stream < o.stream;
    return ptr < o.ptr;
  }
};

struct BlockPool {
  bool is_small = false;
  std::uint32_t owner = kNil;  // private pool index, kNil for the default pools
  OrderedSet<SizeKey> blocks;
  OrderedSet<AddrKey> unmapped;
  std::int64_t get_free_blocks_call_count = 0;
};

struct ExpandableSegment {
  Addr base = 0;
  ByteCount page = 0;  // "segment_size" in torch
  std::size_t max_handles = 0;
  std::vector<bool> mapped;  // per page
  StreamId stream = 0;
  bool live = false;

  [[nodiscard]] ByteCount size() const { return page * max_handles; }
};

struct PrivatePool {
  PoolId id;
  int use_count = 1;
  int cuda_malloc_count = 0;
  std::uint32_t large = kNil;
  std::uint32_t small = kNil;
  bool use_on_oom = false;
  bool no_split = false;
  bool live = true;
};

using FreeCursor = OrderedSet<SizeKey>::Cursor;

// A block get_free_block would take and where its free-list key is.
struct FreeBlockFound {
  BlockRef ref = kNil;
  FreeCursor at;
};

// The free-list entry of the first neighbour a free merges with, left in place for the merged
// block to take over (OrderedSet::replace) instead of an erase and an insert; `moved`: another
// key was erased since, so `at` must be found again.
struct HeldEntry {
  bool held = false;
  bool moved = false;
  SizeKey key{};
  FreeCursor at;
};

struct AllocParams {
  ByteCount size = 0;  // rounded request
  StreamId stream = 0;
  std::uint32_t pool = 0;
  ByteCount alloc_size = 0;
  bool expandable_active = false;
  BlockRef block = kNil;
  // get_free_block's block is still in its pool's free list, at `at`: alloc_found_block erases it
  // there, or puts the split remainder in its place (nothing touches the list in between).
  bool listed = false;
  FreeCursor at;
  std::uint64_t tag = 0;
  // throw_on_cudamalloc_oom turned the fraction check into an immediate oom.
  bool rejected = false;
};

// A statistic of pool type t goes up or down by v: the pool's figures and the aggregate's current
// value and peak, as c10 updates both. The aggregate's cumulative counts (allocated, freed) are
// the sums of the pools', made when the statistics are read (DeviceStats::sumPools).
inline void poolIncrease(StatArray& a, std::size_t t, std::int64_t v) {
  a[t].increase(v);
  Stat& all = a[kAggregate];
  all.current = saturatingAdd(all.current, v);
  if (all.current > all.peak) all.peak = all.current;
}
inline void poolDecrease(StatArray& a, std::size_t t, std::int64_t v) {
  a[t].decrease(v);
  a[kAggregate].current = saturatingAdd(a[kAggregate].current, -v);
}

struct CachingAllocator::Impl {
  AllocatorConfig config;
  DeviceModel* device = nullptr;
  EventSink* sink = nullptr;
  DeviceStats stats;

  std::vector<Block> arena;
  std::vector<BlockRef> free_slots;
  std::vector<BlockPool> pools;  // 0: large, 1: small, then pairs for private pools
  std::vector<PrivatePool> private_pools;
  std::map<PoolId, std::uint32_t> pool_index;      // graph_pools
  std::map<PoolId, std::uint32_t> pools_freeable;  // graph_pools_freeable
  std::vector<PoolRouting> captures_underway;
  std::vector<PoolId> use_on_oom_pools;
  std::vector<ExpandableSegment> segments_es;
  std::vector<OutstandingEvent> outstanding;  // cuda_events, in recording order
  std::vector<BlockRef> outstanding_blocks;   // parallel to `outstanding`
  std::uint64_t event_sequence = 0;
  std::vector<BlockRef> deferred_blocks;  // freed with stream uses during a capture
  std::size_t active_count = 0;
  ByteCount total_allocated_memory = 0;
  std::optional<ByteCount> allowed_memory_maximum;
  CheckLevel check_level = CheckLevel::kCheap;
  std::string invariant_failure;
  std::vector<std::size_t> scratch_indices;
  std::vector<bool> scratch_gone;  // retireEvents' marks, kept between calls

  Impl(AllocatorConfig c, DeviceModel* d, EventSink* s);

  // --- arena
  BlockRef newBlock(StreamId stream, ByteCount size, std::uint32_t pool, Addr ptr);
  void deleteBlock(BlockRef b);
  Block& at(BlockRef b) { return arena[b]; }
  const Block& at(BlockRef b) const { return arena[b]; }

  // --- pool sets
  SizeKey sizeKey(BlockRef b) const { return {arena[b].stream, arena[b].size, arena[b].ptr, b}; }
  AddrKey addrKey(BlockRef b) const { return {arena[b].stream, arena[b].ptr, b}; }
  void insertIntoBlocks(BlockRef b);
  void eraseFromBlocks(BlockRef b);
  // Erases the free-list key at `at` and inserts b's (same as erase then insertIntoBlocks).
  void replaceInBlocks(FreeCursor at, BlockRef b);
  [[nodiscard]] bool poolIsSmall(std::uint32_t pool) const { return pools[pool].is_small; }
  [[nodiscard]] PoolId poolIdOf(std::uint32_t pool) const;
  // The StatType of a pool's statistics (poolIncrease and poolDecrease update the aggregate too).
  [[nodiscard]] std::size_t statType(std::uint32_t pool) const {
    return pools[pool].is_small ? kSmallPool : kLargePool;
  }
  // The statistics as torch.cuda.memory_stats() has them, aggregates included.
  [[nodiscard]] DeviceStats summedStats() const {
    DeviceStats s = stats;
    s.sumPools();
    return s;
  }
  [[nodiscard]] StatTotals totals() const {
    return {stats.reserved_bytes[kAggregate].current, stats.allocated_bytes[kAggregate].current,
            stats.active_bytes[kAggregate].current, stats.requested_bytes[kAggregate].current};
  }

  // --- events
  // Hands the event to the sink, if any (inline: a replay without a sink pays one test).
  void emit(Action action, Addr addr, ByteCount size, StreamId stream, std::uint64_t tag, std::uint32_t pool) {
    if (sink) emitTo(action, addr, size, stream, tag, pool);
  }
  void emitTo(Action action, Addr addr, ByteCount size, StreamId stream, std::uint64_t tag, std::uint32_t pool);

  // --- malloc path (allocator.cpp)
  MallocResult malloc(ByteCount orig_size, StreamId stream, std::uint64_t tag);
  std::uint32_t getPool(ByteCount size, StreamId stream) const;
  bool getFreeBlock(AllocParams& p);
  // The block get_free_block would take (ref kNil if none), without taking it.
  FreeBlockFound findFreeBlock(const AllocParams& p) const;
  bool allocBlock(AllocParams& p, bool is_retry);
  bool tryMempoolFallback(AllocParams& p);
  bool shouldSplit(BlockRef block, ByteCount size, bool expandable_active) const;
  BlockRef allocFoundBlock(const AllocParams& p, ByteCount orig_size, bool split);
  MallocResult mallocAt(Addr addr, ByteCount size, std::uint64_t tag);
  [[nodiscard]] BlockRef cachedBlockAt(Addr addr) const;
  void free(BlockRef b);
  void freeBlock(BlockRef b);
  // With `hold`, the first mapped neighbour merged keeps its free-list entry (see HeldEntry).
  ByteCount tryMergeBlocks(BlockRef dst, BlockRef src, std::uint32_t pool, HeldEntry* hold = nullptr);
  void eraseMergedNeighbour(BlockRef src, std::uint32_t pool, HeldEntry* hold);
  void insertEvents(BlockRef b);
  void processEvents();
  void retireEvents(const std::vector<std::size_t>& indices);
  void insertEventsDeferredUntilNoCapture();

  // --- release paths (allocator_release.cpp)
  void garbageCollectCachedBlocks();
  [[nodiscard]] bool releasableSegment(BlockRef b) const;
  bool releaseAvailableCachedBlocks(const AllocParams& p);
  bool releaseCachedBlocks(PoolId pool);
  void releaseBlocks(std::uint32_t pool);
  void releaseBlock(BlockRef b);
  void synchronizeAndFreeEvents(std::uint32_t only_private_pool = kNil);
  void unmapBlock(BlockRef b);
  void releaseExpandableSegment(BlockRef b);

  // --- expandable segments (allocator_expandable.cpp)
  BlockRef tryAllocateExpandableBlock(StreamId stream, std::uint32_t pool, ByteCount size, std::uint64_t tag);
  BlockRef findExpandableBlock(StreamId stream, std::uint32_t pool, ByteCount size);
  bool mapBlock(BlockRef to_map, ByteCount size, std::uint64_t tag);
  void splice(BlockRef b, BlockRef before, BlockRef after);

  // --- checks (allocator_check.cpp)
  void afterOperation(const char* what);
  [[nodiscard]] std::string validate() const;
  void fail(std::string message);

  // --- views (allocator_views.cpp)
  [[nodiscard]] std::vector<SegmentView> segments() const;
};

}  // namespace reservoir::sim
