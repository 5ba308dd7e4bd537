// What pins the cache at a peak, and where the peak came from (peak_explain.h): one rule each.
#include "reservoir/replay/peak_explain.h"

#include <algorithm>
#include <deque>
#include <map>

#include "reservoir/replay/session.h"
#include "whatif/run_engine.h"

namespace reservoir::replay {

namespace {

__extension__ using UInt128 = unsigned __int128;

// The whole pages of an expandable segment inside its free block `b` (what an empty_cache unmaps).
sim::ByteCount freePages(const sim::SegmentView& seg, const sim::BlockInfoView& b, const sim::AllocatorConfig& cfg) {
  const sim::ByteCount page = seg.is_large ? cfg.large_segment_size : sim::kSmallBuffer;
  const sim::ByteCount first = (b.address - seg.address + page - 1) / page;
  const sim::ByteCount last = (b.address + b.size - seg.address) / page;
  return last > first ? (last - first) * page : 0;
}

}  // namespace

PeakAnalysis analyzeCache(std::span<const sim::SegmentView> segments, const sim::AllocatorConfig& config,
                          std::int64_t reserved, std::int64_t allocated,
                          const std::function<StackId(std::uint64_t tag)>& stack_of) {
  PeakAnalysis a;
  a.reserved = reserved;
  a.allocated = allocated;
  a.cached = reserved - allocated;
  for (const sim::SegmentView& seg : segments) {
    sim::ByteCount free_bytes = 0, releasable = 0;
    bool any_live = false;
    for (const auto& b : seg.blocks) {
      if (b.state != traces::BlockState::kInactive) {
        any_live = true;
        continue;
      }
      free_bytes += b.size;
      if (seg.is_expandable) releasable += freePages(seg, b, config);
    }
    if (!seg.is_expandable && !any_live) releasable = seg.total_size;
    a.releasable += static_cast<std::int64_t>(releasable);
    const sim::ByteCount pinned = free_bytes - std::min(free_bytes, releasable);
    if (pinned == 0) continue;
    PinnedSegment ps{seg.address, seg.total_size, pinned, {}};
    for (const auto& b : seg.blocks)
      if (b.state != traces::BlockState::kInactive && b.tag > 0) ps.live_blocks.emplace_back(b.size, stack_of(b.tag));
    a.pinned.push_back(std::move(ps));
  }
  std::stable_sort(a.pinned.begin(), a.pinned.end(),
                   [](const PinnedSegment& x, const PinnedSegment& y) { return x.free_bytes > y.free_bytes; });
  return a;
}

namespace {

// Shares `seg.free_bytes` among its live blocks' stacks in proportion to their sizes.
void shareSegment(const PinnedSegment& seg, std::map<StackId, PinningStack>& by_stack, sim::ByteCount& unattributed) {
  sim::ByteCount live = 0;
  std::size_t largest = 0;
  for (std::size_t i = 0; i < seg.live_blocks.size(); ++i) {
    live += seg.live_blocks[i].first;
    if (seg.live_blocks[i].first > seg.live_blocks[largest].first) largest = i;
  }
  if (seg.live_blocks.empty() || live == 0) {
    unattributed += seg.free_bytes;
    return;
  }
  sim::ByteCount given = 0;
  std::vector<sim::ByteCount> share(seg.live_blocks.size());
  for (std::size_t i = 0; i < seg.live_blocks.size(); ++i) {
    const auto exact = static_cast<UInt128>(seg.free_bytes) * seg.live_blocks[i].first / live;
    share[i] = static_cast<sim::ByteCount>(exact);
    given += share[i];
  }
  share[largest] += seg.free_bytes - given;
  std::vector<StackId> seen;
  for (std::size_t i = 0; i < seg.live_blocks.size(); ++i) {
    const auto& [size, stack] = seg.live_blocks[i];
    PinningStack& s = by_stack[stack];
    s.stack = stack;
    ++s.blocks;
    s.live_bytes += size;
    s.pinned_bytes += share[i];
    if (std::find(seen.begin(), seen.end(), stack) == seen.end()) {
      seen.push_back(stack);
      ++s.segments;
    }
  }
}

}  // namespace

CachePins cachePins(const PeakAnalysis& a, const PinLimits& limits) {
  CachePins p;
  p.reserved = a.reserved;
  p.allocated = a.allocated;
  p.cached = a.cached;
  p.releasable = a.releasable;
  p.pinned = a.cached - a.releasable;
  p.pinned_segments = a.pinned.size();
  std::map<StackId, PinningStack> by_stack;
  for (const PinnedSegment& seg : a.pinned) {
    p.pinned_free += seg.free_bytes;
    shareSegment(seg, by_stack, p.unattributed);
  }
  for (std::size_t i = 0; i < a.pinned.size() && i < limits.segments; ++i) {
    const PinnedSegment& seg = a.pinned[i];
    PinnedSegmentEntry e{seg.address, seg.size, seg.free_bytes, seg.live_blocks.size(), 0, {}};
    for (const auto& [size, stack] : seg.live_blocks) {
      e.live_bytes += size;
      if (e.live_blocks.size() < limits.blocks) e.live_blocks.emplace_back(size, stack);
    }
    p.segments.push_back(std::move(e));
  }
  std::vector<PinningStack> stacks;
  for (auto& [id, s] : by_stack) stacks.push_back(s);
  std::stable_sort(stacks.begin(), stacks.end(), [](const PinningStack& x, const PinningStack& y) {
    if (x.pinned_bytes != y.pinned_bytes) return x.pinned_bytes > y.pinned_bytes;
    return x.live_bytes > y.live_bytes;
  });
  p.pinning_stacks = stacks.size();
  if (stacks.size() > limits.stacks) stacks.resize(limits.stacks);
  p.stacks = std::move(stacks);
  return p;
}

std::int64_t startValue(const PreparedTrace& prepared, PeakQuantity quantity) {
  std::int64_t v = 0;
  for (const auto& s : prepared.program.seed) {
    if (quantity == PeakQuantity::kReserved) {
      v += static_cast<std::int64_t>(s.reservedBytes());
      continue;
    }
    for (const auto& b : s.blocks)
      if (!b.pending) v += static_cast<std::int64_t>(b.size);
  }
  return v;
}

namespace {

// The quantity after each op: a run's timeline, or a model stage's per-op arrays.
struct Values {
  std::span<const TimelinePoint> timeline;
  const StepSeries* reserved = nullptr;
  mutable std::size_t hint = 0;  // reserved's change index at the last lookup (walks go op by op)
  const CompactSeries* allocated = nullptr;
  PeakQuantity q = PeakQuantity::kReserved;
  [[nodiscard]] std::size_t size() const {
    if (!timeline.empty()) return timeline.size();
    return q == PeakQuantity::kReserved ? (reserved ? reserved->size() : 0) : (allocated ? allocated->size() : 0);
  }
  [[nodiscard]] std::int64_t at(std::uint32_t op) const {
    if (!timeline.empty()) return q == PeakQuantity::kReserved ? timeline[op].reserved : timeline[op].allocated;
    return q == PeakQuantity::kReserved ? reserved->at(op, hint) : (*allocated)[op];
  }
};

PeakStep stepAt(const PreparedTrace& prepared, const Values& v, std::uint32_t op, std::int64_t start) {
  const PeakQuantity q = v.q;
  const Op& o = prepared.program.ops[op];
  const auto& trace = prepared.snapshot->devices[prepared.device_index];
  PeakStep s;
  s.op = op;
  s.event = q == PeakQuantity::kReserved ? detail::reservedEventOf(trace, o) : detail::lastEventOf(o);
  s.time_us = trace.timeOf(s.event);
  s.before = op == 0 ? start : v.at(op - 1);
  s.after = v.at(op);
  // The allocation's stack; a backward-pass op without frames of its own: its forward frames.
  s.stack = prepared.opStack(o);
  if (prepared.snapshot->stack(s.stack).empty() && o.first_event < trace.events.size())
    s.stack = prepared.snapshot->callStack(trace.events[o.first_event]);
  s.request = o.kind == OpKind::kMalloc ? o.size : 0;
  s.kind = o.kind;
  return s;
}

// The run of at most `span` ops ending at or before `peak_op` of whose rise the most is held at
// the peak. Walks backwards from the peak: `least` is the least value over [b, peak] (the part
// of any rise before b still there), and a sliding-window minimum of the values before each
// op in [b - span + 1, b] gives the lowest start; on equal starts the later op, on equal holds
// the earlier end.
struct ClimbSpan {
  std::uint32_t first = 0, last = 0;
  std::int64_t held = 0;
};

ClimbSpan bestClimb(const Values& v, std::uint32_t peak_op, std::int64_t start, std::uint32_t span) {
  auto before = [&](std::uint32_t j) { return j == 0 ? start : v.at(j - 1); };
  ClimbSpan best{peak_op, peak_op, 0};
  std::deque<std::uint32_t> lows;  // window indices, decreasing; their values before, non-decreasing from the front
  std::int64_t least = v.at(peak_op);
  std::uint32_t next_in = peak_op + 1;  // the window's lowest index not yet pushed, plus one
  for (std::uint32_t b = peak_op + 1; b-- > 0;) {
    least = std::min(least, v.at(b));
    const std::uint32_t low = b + 1 >= span ? b + 1 - span : 0;
    while (next_in > low) {
      const std::uint32_t a = --next_in;
      while (!lows.empty() && before(lows.back()) > before(a)) lows.pop_back();
      lows.push_back(a);
    }
    while (!lows.empty() && lows.front() > b) lows.pop_front();
    const std::int64_t held = least - before(lows.front());
    if (held > 0 && held >= best.held) best = ClimbSpan{lows.front(), b, held};
  }
  return best;
}

PeakClimb climbOn(const PreparedTrace& prepared, const Values& v, const PeakOrigin& o) {
  const std::uint32_t peak_op = o.set.op;
  PeakClimb c;
  c.span_ops = std::max<std::uint32_t>(1, (peak_op + 1) / 100);
  const ClimbSpan s = bestClimb(v, peak_op, o.start, c.span_ops);
  c.held = s.held;
  c.first = s.first == peak_op ? o.set : stepAt(prepared, v, s.first, o.start);
  c.last = s.last == peak_op ? o.set : stepAt(prepared, v, s.last, o.start);
  // Over [first, last], backwards: each op's own held rise (the least value from it to the peak).
  std::int64_t least = o.peak;
  for (std::uint32_t j = peak_op; j > s.last; --j) least = std::min(least, v.at(j));
  std::uint32_t largest = s.last;
  std::int64_t largest_held = -1;
  for (std::uint32_t j = s.last + 1; j-- > s.first;) {
    least = std::min(least, v.at(j));
    const std::int64_t before = j == 0 ? o.start : v.at(j - 1);
    c.rising_ops += v.at(j) > before;
    if (least - before >= largest_held) {
      largest_held = least - before;
      largest = j;
    }
  }
  c.largest = largest == peak_op ? o.set : stepAt(prepared, v, largest, o.start);
  c.largest.held = std::max<std::int64_t>(0, largest_held);
  c.first.held = c.last.held = 0;
  return c;
}

PeakOrigin originOn(const PreparedTrace& prepared, const Values& v, const PeakInfo& info) {
  PeakOrigin o;
  o.quantity = v.q;
  o.start = startValue(prepared, v.q);
  if (info.op == kNoOp || info.op >= v.size() || info.op >= prepared.program.ops.size()) return o;
  o.known = true;
  o.peak = info.bytes;
  o.set = stepAt(prepared, v, info.op, o.start);
  o.set.event = info.event;  // the run's own definition of the peak's event
  o.set.time_us = info.time_us;
  // Backwards from the peak: the least value over [op, peak] bounds what of op's rise is still there.
  std::int64_t least = v.at(info.op);
  std::uint32_t best = info.op;
  std::int64_t best_held = -1;
  for (std::uint32_t j = info.op + 1; j-- > 0;) {
    least = std::min(least, v.at(j));
    const std::int64_t before = j == 0 ? o.start : v.at(j - 1);
    const std::int64_t held = std::max<std::int64_t>(0, least - before);
    if (held >= best_held && held > 0) {  // >=: walking backwards, ties go to the earliest
      best_held = held;
      best = j;
    }
  }
  o.largest_rise = stepAt(prepared, v, best, o.start);
  if (best == info.op) o.largest_rise = o.set;
  o.largest_rise.held = std::max<std::int64_t>(0, best_held);
  o.set.held = std::max<std::int64_t>(0, std::min(o.set.after, o.peak) - o.set.before);
  o.climb = climbOn(prepared, v, o);
  return o;
}

}  // namespace

PeakOrigin peakOrigin(const PreparedTrace& prepared, const RunResult& run, PeakQuantity q) {
  Values v;
  v.timeline = run.timeline;
  if (run.timeline.empty()) {  // the run's compact curves, where it kept those instead (keep_curves)
    v.reserved = &run.curves.reserved;
    v.allocated = &run.curves.allocated;
  }
  v.q = q;
  return originOn(prepared, v, q == PeakQuantity::kReserved ? run.peak_reserved : run.peak_allocated);
}

PeakOrigin peakOrigin(const ModelStage& stage, PeakQuantity q) {
  Values v;
  v.reserved = &stage.reserved;
  v.allocated = &stage.allocated;
  v.q = q;
  const RunResult& run = stage.run;
  return originOn(stage.prepared, v, q == PeakQuantity::kReserved ? run.peak_reserved : run.peak_allocated);
}

}  // namespace reservoir::replay
