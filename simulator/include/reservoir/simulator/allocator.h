// The exact model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp,
// torch 2.11) for one device: the same segment decisions, block layout, trace events and
// statistics for the same requests. No I/O, no CUDA: the driver and the GPU's progress are
// a DeviceModel (device_model.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "reservoir/simulator/alloc_config.h"
#include "reservoir/simulator/device_model.h"
#include "reservoir/simulator/repeat.h"
#include "reservoir/simulator/sizes.h"
#include "reservoir/simulator/stats.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::sim {

using traces::Action;
using traces::PoolId;

// A handle to a live allocation (valid from malloc until it is freed and completed).
struct BlockHandle {
  std::uint32_t index = ~0u;
  [[nodiscard]] bool valid() const { return index != ~0u; }
  auto operator<=>(const BlockHandle&) const = default;
};

// One trace entry the model emits, as the recorded trace has it.
struct SimEvent {
  Action action = Action::kUnknown;
  Addr addr = 0;  // device_free for kOom
  ByteCount size = 0;
  StreamId stream = 0;
  std::uint64_t tag = 0;  // the allocation's tag (alloc/free_*), 0 otherwise
  PoolId pool;
};

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void onEvent(const SimEvent& event) = 0;
};

struct MallocResult {
  BlockHandle block;  // invalid on OOM
  Addr addr = 0;
  ByteCount block_size = 0;  // the rounded (and possibly unsplit) block size
  [[nodiscard]] bool ok() const { return block.valid(); }
};

// How a private pool chooses allocations while it is active (torch.cuda.use_mem_pool routes
// the calling thread's allocations; a CUDA-graph capture routes one stream's).
struct PoolRouting {
  PoolId pool;
  std::optional<StreamId> only_stream;  // nullopt: every allocation (use_mem_pool)
};

struct BlockInfoView {
  Addr address = 0;
  ByteCount size = 0;
  ByteCount requested_size = 0;
  traces::BlockState state = traces::BlockState::kInactive;
  std::uint64_t tag = 0;  // tag of the allocation that last used this block
};

struct SegmentView {
  Addr address = 0;
  ByteCount total_size = 0, allocated_size = 0, active_size = 0, requested_size = 0;
  StreamId stream = 0;
  bool is_large = true;
  bool is_expandable = false;
  PoolId pool;
  std::uint64_t tag = 0;  // tag of the malloc that created (or first mapped) the segment
  std::vector<BlockInfoView> blocks;
};

// Invariant checks in tiers: cheap ones always run; whole-pool validation (free lists
// sorted and consistent, blocks tile their segments, merged neighbours, statistics equal to
// a recount) runs after every operation when enabled and compiled in
// (RESERVOIR_EXPENSIVE_CHECKS).
// State that existed before a trace window began (see traces/window_start.h).
struct SeedBlock {
  Addr addr = 0;
  ByteCount size = 0;  // block size
  ByteCount requested = 0;
  bool pending = false;  // freed, waiting for a stream's event
  std::uint64_t tag = 0;
};

struct SeedSegment {
  Addr addr = 0;
  ByteCount size = 0;
  StreamId stream = 0;
  bool is_small = false;
  std::vector<SeedBlock> blocks;  // occupied blocks by address; the gaps are free
  // The segment's pool: the default pools, or a private one (a CUDA graph's or a MemPool's)
  // that was alive when the window began. Seeding creates that pool if it does not exist.
  PoolId pool;
  // An expandable segment: `addr` is its reservation's base, `size` at least the span the
  // trace shows (the reservation gets the configured size when that is larger), `mapped` the
  // page ranges mapped at the start; the blocks lie in them, the rest of a range is free.
  bool is_expandable = false;
  std::vector<std::pair<Addr, ByteCount>> mapped;

  // Bytes it holds on the device: its size, or its mapped pages when expandable.
  [[nodiscard]] ByteCount reservedBytes() const {
    if (!is_expandable) return size;
    ByteCount total = 0;
    for (const auto& range : mapped) total += range.second;
    return total;
  }
};

// The stream recorded for pending seed blocks whose using stream is unknown.
inline constexpr StreamId kUnknownUseStream = ~StreamId{0};

enum class CheckLevel : std::uint8_t { kCheap, kExpensive };

class CachingAllocator {
 public:
  CachingAllocator(AllocatorConfig config, DeviceModel* device, EventSink* sink = nullptr);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator& other);  // a full copy of the state (checkpoints)
  CachingAllocator& operator=(const CachingAllocator& other);
  CachingAllocator(CachingAllocator&&) noexcept;
  CachingAllocator& operator=(CachingAllocator&&) noexcept;

  // Rebinds the device model and sink (after copying a checkpoint).
  void rebind(DeviceModel* device, EventSink* sink);

  // torch.empty(size) on `stream`: malloc(orig_size). `tag` names the allocation in events.
  MallocResult malloc(ByteCount size, StreamId stream, std::uint64_t tag = 0);
  // A CUDA-graph tree restoring a private pool to its checkpoint (setCheckpointPoolState, through
  // setSegmentStateToCheckpoint): the cached block that starts at `addr` is allocated as exactly
  // `size` bytes and split when it is larger, whatever the rounding and split rules say. Invalid
  // (and nothing changes) when no cached block of at least `size` bytes starts there.
  MallocResult mallocAt(Addr addr, ByteCount size, std::uint64_t tag = 0);
  // tensor.record_stream(stream) before the tensor dies.
  void recordStream(BlockHandle block, StreamId stream);
  // The tensor's storage dies.
  void free(BlockHandle block);
  // Builds state that predates the trace (no events); statistics start from it. Returns one
  // handle per seeded block, in order. Only on an allocator that has done nothing yet.
  Expected<std::vector<BlockHandle>> seed(std::span<const SeedSegment> segments);

  // The start of every malloc: retire completed record_stream events (process_events).
  void processEvents();

  // torch.cuda.empty_cache() (release_cached_blocks of the default pool), or of one pool.
  void emptyCache(PoolId pool = PoolId{});
  // torch.cuda.set_per_process_memory_fraction(f).
  void setMemoryFraction(double fraction);
  [[nodiscard]] std::optional<ByteCount> allowedMemoryMaximum() const;
  // allocator settings at run time (torch.cuda.memory._set_allocator_settings).
  Status setSettings(std::string_view conf);

  // Private pools (torch.cuda.MemPool, CUDA graphs).
  void createPool(PoolId pool, bool use_on_oom = false, bool no_split = false);
  void beginAllocateToPool(const PoolRouting& routing);
  void endAllocateToPool(PoolId pool);
  void releasePool(PoolId pool);

  // torch.cuda.memory_stats(), made when asked (the aggregates are summed from the pools).
  [[nodiscard]] DeviceStats stats() const;
  // The aggregate reserved, allocated, active and requested bytes now: what a replay reads
  // after every request, without the whole of stats().
  [[nodiscard]] StatTotals totals() const;
  // Every statistic's peak, in peakStatKeys()'s order, without the whole of stats().
  [[nodiscard]] PeakValues peaks() const;
  void resetPeakStats();
  [[nodiscard]] const AllocatorConfig& config() const;
  [[nodiscard]] ByteCount totalAllocatedMemory() const;  // bytes obtained from the driver
  [[nodiscard]] std::span<const OutstandingEvent> outstandingEvents() const;

  // The block a live allocation occupies.
  [[nodiscard]] Addr addressOf(BlockHandle block) const;
  [[nodiscard]] ByteCount sizeOf(BlockHandle block) const;
  [[nodiscard]] std::uint64_t tagOf(BlockHandle block) const;
  [[nodiscard]] bool isAllocated(BlockHandle block) const;

  // The state as torch.cuda.memory._snapshot()'s "segments" lists it, sorted by address.
  [[nodiscard]] std::vector<SegmentView> segments() const;

  // The free blocks of `stream` in the pool a request of `size` would use, near `size`
  // (for divergence reports): (address, size) in free-list order.
  [[nodiscard]] std::vector<std::pair<Addr, ByteCount>> freeBlocksNear(ByteCount size, StreamId stream,
                                                                       std::size_t limit) const;
  // Would a request of `orig_size` on `stream` be served from the cache right now (no
  // state change)? Used to tell an empty_cache apart from a malloc's release path.
  [[nodiscard]] bool wouldReuseCachedBlock(ByteCount orig_size, StreamId stream) const;
  // Would the garbage collector free something if a malloc missed the cache now?
  [[nodiscard]] bool wouldCollectGarbage() const;

  void setCheckLevel(CheckLevel level);
  // Runs the whole-pool validation now; returns "" or a description of the first violation.
  [[nodiscard]] std::string validate() const;
  // The first invariant violation seen by the automatic checks ("" if none).
  [[nodiscard]] const std::string& invariantFailure() const;

  // Whether this state repeats `earlier`, a copy of this model one period before (repeat.h):
  // what the period changed, or nullopt. Runs on the default pools only (no private pools,
  // captures or expandable segments, no garbage collection threshold).
  [[nodiscard]] std::optional<Repeat> repeatOf(const CachingAllocator& earlier, const RepeatRules& rules) const;
  // The state `periods` more periods on, as the run would reach it: `repeat` (from repeatOf on
  // this state) applied that many times more.
  void advance(const Repeat& repeat, std::uint64_t periods);

  // The model's state; defined in simulator/src (internal to the library).
  struct Impl;

 private:
  std::uint32_t seedPool(const SeedSegment& s);
  Status seedExpandable(const SeedSegment& s, std::vector<BlockHandle>& handles);
  std::unique_ptr<Impl> impl_;
};

}  // namespace reservoir::sim
