// Private-pool segments released before the snapshot. A snapshot of torch 2.11 names a segment's
// pool only for the segments still there at the dump (and its trace entries name none), so the
// conformance replay routes an allocation to a private pool by the final segment it lands in. A
// segment that a MemPool or a CUDA graph's pool made and gave back before the dump (an
// empty_cache after the graph or the pool was dropped) leaves no such trace, and its requests
// went to the default pools: the model then served them from the default pools' cache where
// torch made a new segment in the private pool (a released CUDA graph, issue 28).
//
// The rule, from what the recording says of the pools it still shows. The allocations that
// landed in segments whose pool is known (the final ones, the window's start) tell which pools
// each call stack allocated in. A segment whose pool is not known is then
//   - the pool that its allocations' stacks name, when those that allocated in one pool alone
//     all name the same one (a `use_mem_pool` body allocates from the same lines on every step;
//     a captured forward runs the same stack in the capture as in the graph's final segments);
//   - where none of its allocations has frames (a backward pass's, in the autograd engine's
//     thread) in a trace recorded with stacks, the pool of its stream, when the stream's known
//     segments are all one private pool's (a CUDA graph captures on its own stream; the 8-byte
//     generator states that capture_begin allocates there before the capture are the default
//     pool's, and have frames; a trace without any frames cannot tell them apart and is left as is);
//   - else a default-pool segment, as before.
// It holds from the segment's segment_alloc to its segment_free. Expandable segments are left as
// they are (their pages are mapped into one reservation per pool and stream).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "reservoir/core/units.h"
#include "reservoir/simulator/allocator.h"
#include "reservoir/traces/snapshot.h"
#include "reservoir/traces/window_start.h"

namespace reservoir::replay::detail {

// An address range that belonged to a private pool over events [from_event, to_event]: a final
// segment from the event that made it (to_event: none), or a segment given back before the
// snapshot until its segment_free. The conformance replay routes allocations by these ranges.
struct PoolRange {
  Addr begin = 0, end = 0;
  std::size_t from_event = 0;
  traces::PoolId pool;
  std::size_t to_event = SIZE_MAX;
  bool by_stream = false;  // a released segment decided by its stream (else by its allocations' stacks)
};

// A segment given back before the snapshot that the replay found to be a private pool's although
// nothing at the dump shows the pool (it gave back every segment it had): the recording made the
// segment for a request that the default pools' cache would have served (inferredPoolSeed).
struct PoolSeed {
  std::size_t segment_event = 0;  // its segment_alloc
  traces::PoolId pool;            // an inferred pool: (-1, k) (PoolId::inferred)
};

// The seeds count as segments whose pool is known: their ranges are returned with the others',
// and their allocations' stacks vote for the pool of the rest.
std::vector<PoolRange> releasedPoolRanges(const traces::Snapshot& snapshot, const traces::DeviceTrace& trace,
                                          const traces::WindowStart& start, std::span<const PoolSeed> seeds = {});

// After a divergence at event `at` where the model served the request from its cache (`simulated`
// an alloc) and the recording made a segment for it (a segment_alloc given back before the
// snapshot, in a trace that does not record pool ids): that segment is taken for a private pool's.
// The pool is that of an earlier seed on the same stream whose segment is still held at `at` (a
// pool keeps its segments until it is released), else a new one.
std::optional<PoolSeed> inferredPoolSeed(const traces::Snapshot& snap, const traces::DeviceTrace& trace, std::size_t at,
                                         const sim::SimEvent& simulated, std::span<const PoolSeed> seeds);

// Where the entries name their pool (pool_id: newer torch; the torch backend's own recording,
// annotated with the pools it ran), the segments given back before the snapshot are known
// outright: a segment is the pool of the allocations that land in it. Its range lets the replay
// see that the pool was released when one of its segments is given back.
std::vector<PoolRange> namedPoolRanges(const traces::Snapshot& snapshot, const traces::DeviceTrace& trace,
                                               const traces::WindowStart& start);

}  // namespace reservoir::replay::detail
