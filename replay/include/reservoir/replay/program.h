// A trace turned back into the program's requests: mallocs, frees (with or without
// record_stream uses), empty_cache calls. The what-if engine edits and replays it; the GPU
// backends execute it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "reservoir/core/status.h"
#include "reservoir/simulator/allocator.h"
#include "reservoir/traces/request_stream.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::replay {

struct ConformanceReport;

enum class OpKind : std::uint8_t { kMalloc, kFree, kEmptyCache };

inline constexpr std::uint32_t kNoOp = std::numeric_limits<std::uint32_t>::max();

// What few mallocs carry beyond the common fields (Program::routes): the private pool the
// request is routed to, and a CUDA-graph tree's checkpoint restore, which takes the block at
// this (recorded) address (sim::CachingAllocator::mallocAt; an ordinary malloc when no cached
// block starts there). Entry 0 of the table is neither.
//
// On an empty_cache op, `pool` is a private pool made freeable just before it (its CUDA graphs or
// MemPool dropped: releasePool, which the trace shows only as the pool's segments given back),
// and `pool_only` that the empty_cache was that pool's own (a MemPool's destructor empties it),
// not the whole cache's.
struct OpRoute {
  std::optional<traces::PoolId> pool;
  std::optional<sim::Addr> restore_at;
  bool pool_only = false;
  friend bool operator==(const OpRoute&, const OpRoute&) = default;
};

// One request of the program: 32 bytes (at 20 M events the ops are the model's largest table).
// The stream is an entry in Program::streams (a trace has a handful; at most kMaxStreamEntries),
// and one field holds what only mallocs and empty_caches have (a route) or only frees have (a
// completion): read them with streamOf, routeOf and completesAt. The stack is not kept: a
// malloc's is its recorded entry's, a free's its allocation's (opStack).
struct Op {
  OpKind kind = OpKind::kMalloc;
  bool deferred : 1 = false;       // free with record_stream uses: completes later
  bool recorded_oom : 1 = false;   // malloc that failed in the recording
  std::uint16_t stream_entry = 0;  // its entry in Program::streams (0: the default stream)
  std::uint32_t first_event = 0;  // the recorded events this op produced: [first_event, end_event)
  std::uint32_t end_event = 0;
  AllocationId alloc;       // malloc / free
  sim::ByteCount size = 0;  // malloc: requested bytes (an oom records the rounded size)
  // Malloc and empty_cache: its entry in Program::routes (0: default pool, no restore). Free: the
  // op at whose start the recording retired it when deferred, else kNoOp (makeOp sets it).
  std::uint32_t link = 0;
  std::uint32_t slot = ~0u;  // malloc / free: its handle slot (assignHandleSlots)
};
static_assert(sizeof(Op) <= 32, "Op grew: it is one per request of the trace");

inline Op makeOp(OpKind kind, std::uint32_t first = 0, std::uint32_t end = 0) {
  Op op;
  op.kind = kind;
  op.link = kind == OpKind::kFree ? kNoOp : 0;
  op.first_event = first;
  op.end_event = end;
  return op;
}

// Where a replay keeps each live allocation's block handle: one slot per allocation live at
// once, given back at its free and reused (last given back, first reused), so a run's table is as
// small as the program's most live allocations and a lookup indexes an array (a hash map by
// allocation id was a quarter of a replay's time). The slots follow the program's own lifetimes;
// an edited run only ends lifetimes earlier (releases) or never starts them (a failed malloc).
struct HandleSlots {
  static constexpr std::uint32_t kNone = ~0u;
  std::vector<std::uint32_t> op;    // per op: a malloc's slot, a free's (kNone: nothing to free)
  std::vector<std::uint32_t> seed;  // per seeded allocation (Program::seed_allocations)
  std::uint32_t count = 0;          // slots in all
  std::size_t assigned_ops = 0;     // assignHandleSlots: the ops whose Op::slot holds theirs (`op` is empty)
};

struct Program {
  std::size_t device_index = 0;
  std::vector<Op> ops;
  std::vector<sim::SeedSegment> seed;          // state before the first event (ring-buffer traces)
  std::vector<AllocationId> seed_allocations;  // parallel to the seeded blocks, in order
  // Seeded blocks freed before the window with their stream's work pending: the op at whose
  // start the recording retired each (its free_completed), for the what-if completion model.
  std::vector<std::pair<AllocationId, std::uint32_t>> seed_completes_at;
  std::vector<traces::PoolId> private_pools;
  std::vector<OpRoute> routes{OpRoute{}};  // the routes ops link to; entry 0: default pool, no restore
  std::vector<sim::StreamId> streams{0};   // Op::stream_entry's table; entry 0: the default stream
  // Streams past the table's kMaxStreamEntries (their ops name entry 0): such a program is not
  // replayed (prepareTrace refuses it). Zero for every real trace.
  std::size_t streams_refused = 0;
  std::unordered_map<sim::StreamId, std::uint16_t> stream_lookup;  // internStream's, once the table is long
  std::vector<sim::Addr> reservation_bases;  // expandable reservations, in the order they were made
  std::size_t events = 0;
  HandleSlots handle_slots;  // assignHandleSlots: the seeds' slots and the count (the ops' are in Op::slot)
};

// `allocations`: the request stream's allocation count (ids at or past it get no slot).
HandleSlots computeHandleSlots(const Program& program, std::size_t allocations);
// The same, written into each op's `slot` (no memory per op) and `program.handle_slots`.
void assignHandleSlots(Program& program, std::size_t allocations);
// Whether `program`'s ops carry their slots (assignHandleSlots ran on all of them).
bool hasHandleSlots(const Program& program);

// An op's route (its pool and checkpoint restore; entry 0 when it has none, and for a free).
inline const OpRoute& routeOf(const Program& program, const Op& op) {
  return program.routes[op.kind == OpKind::kFree ? 0 : op.link];
}
// A free's completion: the op at whose start the recording retired it (kNoOp when not deferred,
// and for other ops).
inline std::uint32_t completesAt(const Op& op) { return op.kind == OpKind::kFree ? op.link : kNoOp; }
// An op's recorded stream.
inline sim::StreamId streamOf(const Program& program, const Op& op) { return program.streams[op.stream_entry]; }
// Each allocation's stack, by allocation id (what edits, exports and the state's blocks name):
// read from a request stream shared with the caller (the GUI's load stage keeps one, which the
// model stage's replay runs on), or copied from one that is not kept (4 bytes an allocation,
// where the stream's allocations are 24).
class AllocationStacks {
 public:
  AllocationStacks() = default;
  explicit AllocationStacks(std::vector<StackId> stacks) : own_(std::move(stacks)) {}
  // Copies the stacks of `stream`'s allocations.
  static AllocationStacks copiedFrom(const traces::RequestStream& stream);
  // Reads them from `stream`, which it keeps.
  static AllocationStacks sharedWith(std::shared_ptr<const traces::RequestStream> stream);

  [[nodiscard]] std::size_t size() const { return shared_ ? shared_->allocations.size() : own_.size(); }
  // The stack of allocation `id` (the empty stack past the table).
  [[nodiscard]] StackId operator[](std::size_t id) const {
    if (id >= size()) return StackId(0);
    return shared_ ? shared_->allocations[id].stack : own_[id];
  }

 private:
  std::shared_ptr<const traces::RequestStream> shared_;
  std::vector<StackId> own_;
};

// An op's stack: a malloc's recorded entry's (its alloc or oom event), a free's allocation's
// (`allocation_stacks`, by allocation id; its free_requested entry's when the stream knows no
// allocation), none for an empty_cache. What the op itself kept until it lost 8 bytes.
StackId opStack(const Op& op, const traces::DeviceTrace& trace, const AllocationStacks& allocation_stacks);

// Streams a program's table holds: an op names its stream in 16 bits.
inline constexpr std::size_t kMaxStreamEntries = 65536;
// The table entry for `stream` (added when new); 0 with `streams_refused` counted when the table
// is full.
std::uint16_t internStream(Program& program, sim::StreamId stream);
// The table entry for `route`: 0 for none, the existing entry of a pool-only route, a new one for
// each checkpoint restore.
std::uint32_t internRoute(Program& program, const OpRoute& route);

// The ops' first events, read from the ops themselves (sorted: ops run in event order), or from
// plain event numbers (tests). Neither is copied: the caller keeps them.
class OpFirstEvents {
 public:
  OpFirstEvents() = default;
  explicit OpFirstEvents(std::span<const Op> ops)
      : base_(reinterpret_cast<const char*>(ops.data()) + offsetof(Op, first_event)), stride_(sizeof(Op)),
        size_(ops.size()) {}
  explicit OpFirstEvents(std::span<const std::uint32_t> events)
      : base_(reinterpret_cast<const char*>(events.data())), stride_(sizeof(std::uint32_t)), size_(events.size()) {}
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] std::uint32_t operator[](std::size_t j) const {
    std::uint32_t v;  // one load at a fixed stride, for ops and plain events alike
    std::memcpy(&v, base_ + j * stride_, sizeof v);
    return v;
  }
  // The number of ops whose first event is < e (lower bound) or <= e (upper bound), searched
  // in [from, size()): the caller knows the ops before `from` qualify.
  [[nodiscard]] std::size_t lowerBound(std::size_t e, std::size_t from = 0) const {
    return search(from, [&](std::uint32_t v) { return v < e; });
  }
  [[nodiscard]] std::size_t upperBound(std::size_t e, std::size_t from = 0) const {
    return search(from, [&](std::uint32_t v) { return v <= e; });
  }

 private:
  // Galloping from `lo` (the plots' columns move forward a few hundred ops at a time: probes
  // near `lo` stay in cache, where a binary search over all later ops missed it at each step).
  template <typename Before>
  [[nodiscard]] std::size_t search(std::size_t lo, Before before) const {
    std::size_t hi = size(), step = 1;
    while (lo + step < hi && before((*this)[lo + step - 1])) {
      lo += step;
      step *= 2;
    }
    hi = std::min(hi, lo + step);
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (before((*this)[mid])) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  const char* base_ = nullptr;
  std::size_t stride_ = sizeof(std::uint32_t);
  std::size_t size_ = 0;
};

// Position of event boundary b (between events b-1 and b) among the ops: the op it lies
// before, i.e. the number of ops whose first event is before b (a search over the ops'
// first events; a table per event was 4 bytes per event for a handful of lookups per edit).
std::uint32_t opAtBoundary(const Program& program, std::size_t boundary);
// The same for the boundaries of a point (thousands of gaps, in trace order): each is found by
// galloping forward from the one before, a smaller boundary searching afresh.
class OpBoundaryCursor {
 public:
  explicit OpBoundaryCursor(const Program& program) : ops_(program.ops) {}
  explicit OpBoundaryCursor(const OpFirstEvents& ops) : ops_(ops) {}
  [[nodiscard]] std::uint32_t at(std::size_t boundary);

 private:
  OpFirstEvents ops_;
  std::size_t boundary_ = 0;
  std::size_t pos_ = 0;  // the answer for boundary_
};

// Continues `program` from recorded event `from` by structure alone (used past a divergence):
// a cache release followed by a new segment counts as the malloc's own release path.
void appendStructurally(const traces::Snapshot& snapshot, const traces::DeviceTrace& trace,
                        const traces::RequestStream& requests, std::size_t from, Program& program);

}  // namespace reservoir::replay
