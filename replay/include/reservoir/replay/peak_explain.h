// Two facts about a run's peak that every front end shows alike (the what-if text and JSON,
// `reservoir report`, the GUI): what pins the cache there, and where the peak came from. Each is
// one rule, here; the front ends only word it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "reservoir/replay/whatif.h"

namespace reservoir::replay {

struct ModelStage;

// ---- What pins the cache -----------------------------------------------------------------

// The cache at one moment, from the allocator's segments: what an empty_cache there would return
// (every segment without a live block; the whole free pages of an expandable one) and, segment by
// segment, the free bytes that stay because live blocks (allocated, or freed but still in use by a
// stream) keep their segment. `reserved` and `allocated` are the allocator's statistics at that
// moment; `stack_of(tag)` is the allocation stack of a block's tag (tag - 1 is its AllocationId).
// The what-if run's analysis at its peak (RunResult::at_peak) is this on the segments there.
PeakAnalysis analyzeCache(std::span<const sim::SegmentView> segments, const sim::AllocatorConfig& config,
                          std::int64_t reserved, std::int64_t allocated,
                          const std::function<StackId(std::uint64_t tag)>& stack_of);

// The same rule at any recorded event of a session's baseline model (the recorded settings): the
// cache after the last op whose first event is at or before `event` (the start state before the
// first op). At the baseline's peak event it is the baseline run's `at_peak`. The GUI's state view
// says what this says.
PeakAnalysis cacheAtEvent(const ModelStage& stage, std::uint32_t event);

// The allocation stack whose live blocks pin cached memory, and how much.
struct PinningStack {
  StackId stack;
  std::size_t blocks = 0;           // its live blocks in pinned segments
  std::size_t segments = 0;         // pinned segments that hold one of them
  sim::ByteCount live_bytes = 0;    // the sizes of those blocks
  sim::ByteCount pinned_bytes = 0;  // its share of the free bytes they keep (see cachePins)
};

// A pinned segment as listed: its live blocks counted in full, listed up to a limit.
struct PinnedSegmentEntry {
  sim::Addr address = 0;
  sim::ByteCount size = 0;
  sim::ByteCount free_bytes = 0;  // cached but not releasable
  std::size_t live_count = 0;     // live blocks with a known allocation
  sim::ByteCount live_bytes = 0;
  std::vector<std::pair<sim::ByteCount, StackId>> live_blocks;  // (size, allocation stack), address order
};

struct PinLimits {
  std::size_t segments = 10;  // pinned segments listed (the largest first)
  std::size_t blocks = 5;     // live blocks listed per segment (in address order)
  std::size_t stacks = 10;    // pinning stacks listed (the most pinned bytes first)
};

// What pins the cache at a run's peak, the figures every front end prints:
//   cached = reserved - allocated; releasable = what an empty_cache there would return;
//   pinned = cached - releasable (what stays: free bytes that live blocks keep, plus blocks freed
//   but still in use by a stream, plus the partial pages of expandable segments);
//   pinned_free = the free bytes of the pinned segments (the part that live blocks keep).
// A pinned segment's free bytes are shared among the stacks of its live blocks in proportion to
// their sizes (floor; the remainder to the largest block), so the stacks' pinned bytes add up to
// pinned_free, except for segments whose live blocks have no known allocation (unattributed).
struct CachePins {
  std::int64_t reserved = 0, allocated = 0;
  std::int64_t cached = 0, releasable = 0, pinned = 0;
  sim::ByteCount pinned_free = 0;
  sim::ByteCount unattributed = 0;  // pinned_free of segments whose live blocks have no allocation stack
  std::size_t pinned_segments = 0;  // all of them (segments lists at most PinLimits::segments)
  std::vector<PinnedSegmentEntry> segments;
  std::size_t pinning_stacks = 0;  // all of them
  std::vector<PinningStack> stacks;
};
CachePins cachePins(const PeakAnalysis& analysis, const PinLimits& limits = {});

// ---- Where the peak came from ------------------------------------------------------------

enum class PeakQuantity : std::uint8_t { kReserved, kAllocated };

// One op of a run and what it did to the quantity. An op's change includes the edits placed just
// before it (an inserted empty_cache), as the run's timeline does.
struct PeakStep {
  std::uint32_t op = kNoOp;
  std::uint32_t event = 0;  // its recorded event (reserved: its last segment_alloc/map, as PeakInfo)
  std::int64_t time_us = 0;
  std::int64_t before = 0, after = 0;  // the quantity before and after it
  std::int64_t held = 0;               // of its rise (after - before), what is still there at the peak
  StackId stack;                       // its allocation's stack (its forward frames when it has none)
  sim::ByteCount request = 0;          // a malloc's requested bytes (0 for other ops)
  OpKind kind = OpKind::kMalloc;
  [[nodiscard]] std::int64_t rise() const { return after - before; }
};

// Where a run's peak came from: the op that set it (the run's PeakInfo), and the rise that made
// it, the op at or before the peak of whose rise the most is still there at the peak
// (held = min(quantity over [op, peak]) - quantity before op, at least 0; ties: the earliest).
// That rise is the big jump a peak is made of, where the op that sets it is often a small last
// step. Needs the run's timeline (RunSettings::keep_timeline) or its curves (keep_curves);
// unknown when the run has neither or no peak.
// The climb that made the peak: the run of ops, at most `span_ops` long (a hundredth of the ops
// up to the peak, at least one), whose rise is the most still held at the peak
// (held = min(quantity over [last, peak]) - quantity before first; ties: the earliest), trimmed to
// the ops that bound it. A spike made of many steps (FSDP's all-gathers mapping 2 GiB each, a
// layer's activations) is one climb, where largest_rise names only its biggest step; a single
// big jump is a climb of one op, largest_rise itself.
struct PeakClimb {
  PeakStep first, last;          // its first and last op (first.before: the quantity before it)
  std::int64_t held = 0;         // of its rise (last.after - first.before), what is still there at the peak
  std::uint32_t rising_ops = 0;  // its ops that raise the quantity
  std::uint32_t span_ops = 0;    // the longest run of ops looked at
  PeakStep largest;              // its op of whose own rise the most is held (the stack that names it)
  [[nodiscard]] std::int64_t rise() const { return last.after - first.before; }
  [[nodiscard]] bool oneOp() const { return first.op == last.op; }
};

struct PeakOrigin {
  PeakQuantity quantity = PeakQuantity::kReserved;
  bool known = false;
  std::int64_t start = 0;  // the quantity before the first op (the window's start state)
  std::int64_t peak = 0;
  PeakStep set;
  PeakStep largest_rise;  // set.op when that op's own rise is the largest held
  PeakClimb climb;        // the climb of at most a hundredth of the ops of which the most is held
  // The op that set the peak is its own climb: no larger rise before it.
  [[nodiscard]] bool setByItsClimb() const { return climb.oneOp() && climb.first.op == set.op; }
};
PeakOrigin peakOrigin(const PreparedTrace& prepared, const RunResult& run, PeakQuantity quantity);
// The same rule on a session's baseline model (its per-op arrays stand for the run's timeline):
// the GUI's peak marker and facts.
PeakOrigin peakOrigin(const ModelStage& stage, PeakQuantity quantity);

// The quantity before the first op of `prepared` (its seeded start state).
std::int64_t startValue(const PreparedTrace& prepared, PeakQuantity quantity);

}  // namespace reservoir::replay
