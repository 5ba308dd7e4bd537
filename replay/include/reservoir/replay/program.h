// A trace turned back into the program's requests: mallocs, frees (with or without
// record_stream uses), empty_cache calls. The what-if engine edits and replays it; the GPU
// backends execute it.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "reservoir/core/status.h"
#include "reservoir/simulator/allocator.h"
#include "reservoir/traces/request_stream.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::replay {

struct ConformanceReport;

enum class OpKind : std::uint8_t { kMalloc, kFree, kEmptyCache };

inline constexpr std::uint32_t kNoOp = std::numeric_limits<std::uint32_t>::max();

struct Op {
  OpKind kind = OpKind::kMalloc;
  std::uint32_t first_event = 0;  // the recorded events this op produced: [first_event, end_event)
  std::uint32_t end_event = 0;
  AllocationId alloc;       // malloc / free
  sim::ByteCount size = 0;  // malloc: requested bytes (an oom records the rounded size)
  sim::StreamId stream = 0;
  StackId stack;                       // the allocation's stack
  bool deferred = false;               // free with record_stream uses: completes later
  std::uint32_t completes_at = kNoOp;  // deferred free: the op at whose start the recording retired it
  bool recorded_oom = false;           // malloc that failed in the recording
  std::optional<traces::PoolId> pool;  // malloc routed to a private pool
  // malloc of a CUDA-graph tree's checkpoint restore: the block at this (recorded) address
  // (sim::CachingAllocator::mallocAt); an ordinary malloc when no cached block starts there.
  std::optional<sim::Addr> restore_at;
};

inline Op makeOp(OpKind kind, std::uint32_t first = 0, std::uint32_t end = 0) {
  Op op;
  op.kind = kind;
  op.first_event = first;
  op.end_event = end;
  return op;
}

struct Program {
  std::size_t device_index = 0;
  std::vector<Op> ops;
  std::vector<sim::SeedSegment> seed;          // state before the first event (ring-buffer traces)
  std::vector<AllocationId> seed_allocations;  // parallel to the seeded blocks, in order
  // Seeded blocks freed before the window with their stream's work pending: the op at whose
  // start the recording retired each (its free_completed), for the what-if completion model.
  std::vector<std::pair<AllocationId, std::uint32_t>> seed_completes_at;
  std::vector<traces::PoolId> private_pools;
  std::vector<sim::Addr> reservation_bases;  // expandable reservations, in the order they were made
  std::size_t events = 0;
  // Position of each event boundary among the ops: boundary b (between events b-1 and b)
  // lies before op at_boundary[b]. Size events + 1.
  std::vector<std::uint32_t> at_boundary;
};

// Fills `at_boundary` from the ops.
void indexBoundaries(Program& program);

// Continues `program` from recorded event `from` by structure alone (used past a divergence):
// a cache release followed by a new segment counts as the malloc's own release path.
void appendStructurally(const traces::DeviceTrace& trace, const traces::RequestStream& requests, std::size_t from,
                        Program& program);

}  // namespace reservoir::replay
