#include "models/allocator_state.h"

#include <algorithm>

#include "reservoir/replay/session.h"

namespace reservoir::gui {

const char* blockKindName(BlockKind kind) {
  switch (kind) {
    case BlockKind::kAllocated: return "allocated";
    case BlockKind::kPendingFree: return "pending free";
    case BlockKind::kCachedFree: return "cached free";
    case BlockKind::kInactiveSplit: return "inactive split";
    case BlockKind::kUnmapped: return "unmapped pages";
  }
  return "?";
}

namespace {

bool sameReservation(std::span<const std::uint64_t> bases, std::uint64_t a, std::uint64_t b) {
  // No reservation base in (a, b].
  return std::none_of(bases.begin(), bases.end(), [&](std::uint64_t x) { return x > a && x <= b; });
}

void addSegment(const sim::SegmentView& sv, AllocatorState& st) {
  StateSegment s;
  s.address = sv.address;
  s.size = sv.total_size;
  s.allocated = sv.allocated_size;
  s.stream = sv.stream;
  s.is_large = sv.is_large;
  s.expandable = sv.is_expandable;
  s.first_block = static_cast<std::uint32_t>(st.blocks.size());
  std::uint64_t live = 0;
  for (const auto& b : sv.blocks) {
    StateBlock out;
    out.address = b.address;
    out.size = b.size;
    out.requested = b.requested_size;
    out.allocation = b.tag > 0 ? static_cast<std::uint32_t>(b.tag - 1) : StateBlock::kNoAllocationId;
    if (b.state == traces::BlockState::kActiveAllocated)
      out.kind = BlockKind::kAllocated;
    else if (b.state == traces::BlockState::kActivePendingFree)
      out.kind = BlockKind::kPendingFree;
    else
      out.kind = BlockKind::kCachedFree;
    if (out.kind != BlockKind::kCachedFree) live += b.size;
    st.blocks.push_back(out);
  }
  s.block_count = static_cast<std::uint32_t>(st.blocks.size()) - s.first_block;
  s.free_bytes = s.size - std::min(s.size, live);
  s.allocated = live;
  // A whole segment with a live block keeps its free blocks (an expandable one unmaps their
  // whole pages instead); which segments pin, and how much, is the cache rule's (applyCache).
  if (!s.expandable && live > 0)
    for (auto& b : std::span(st.blocks).subspan(s.first_block, s.block_count))
      if (b.kind == BlockKind::kCachedFree) b.kind = BlockKind::kInactiveSplit;
  st.reserved += static_cast<std::int64_t>(s.size);
  st.allocated += static_cast<std::int64_t>(sv.allocated_size);
  st.segments.push_back(s);
}

void addGap(std::uint64_t from, std::uint64_t to, std::uint64_t max_gap, AllocatorState& st) {
  StateSegment g;
  g.address = from;
  g.size = max_gap ? std::min(to - from, max_gap) : to - from;
  g.expandable = true;
  g.unmapped_gap = true;
  g.first_block = static_cast<std::uint32_t>(st.blocks.size());
  g.block_count = 1;
  st.blocks.push_back(StateBlock{from, to - from, 0, BlockKind::kUnmapped, StateBlock::kNoAllocationId, false});
  st.segments.push_back(g);
}

}  // namespace

AllocatorState classifyState(const std::vector<sim::SegmentView>& segments, std::uint32_t event,
                             std::span<const std::uint64_t> bases, std::uint64_t max_gap) {
  AllocatorState st;
  st.event = event;
  std::vector<const sim::SegmentView*> order;
  for (const auto& s : segments) order.push_back(&s);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->address < b->address; });
  const sim::SegmentView* prev = nullptr;
  for (const auto* s : order) {
    if (prev && prev->is_expandable && s->is_expandable && prev->stream == s->stream && prev->is_large == s->is_large) {
      const std::uint64_t end = prev->address + prev->total_size;
      if (s->address > end && sameReservation(bases, prev->address, s->address)) addGap(end, s->address, max_gap, st);
    }
    addSegment(*s, st);
    prev = s;
  }
  return st;
}

void applyCache(AllocatorState& st, const replay::PeakAnalysis& cache) {
  const replay::CachePins pins = replay::cachePins(cache, replay::PinLimits{0, 0, 1});
  st.cache_known = true;
  st.releasable = pins.releasable;
  st.pinned = pins.pinned;
  st.pinned_free = static_cast<std::int64_t>(pins.pinned_free);
  st.pinned_segments = pins.pinned_segments;
  if (!pins.stacks.empty()) {
    st.typical_stack = pins.stacks.front().stack;
    st.typical_stack_bytes = static_cast<std::int64_t>(pins.stacks.front().pinned_bytes);
  }
  for (const auto& p : cache.pinned) {
    auto it = std::lower_bound(st.segments.begin(), st.segments.end(), p.address,
                               [](const StateSegment& s, std::uint64_t a) { return s.address < a; });
    if (it == st.segments.end() || it->address != p.address || it->unmapped_gap) continue;
    it->pinned = true;
    it->kept_free = p.free_bytes;
    for (auto& b : std::span(st.blocks).subspan(it->first_block, it->block_count))
      b.pinning = b.kind == BlockKind::kAllocated || b.kind == BlockKind::kPendingFree;
  }
}

AllocatorState stateAtEvent(const replay::ModelStage& stage, std::uint32_t event, std::uint64_t max_gap) {
  AllocatorState st =
      classifyState(stage.stateAtEvent(event), event, stage.prepared.program.reservation_bases, max_gap);
  applyCache(st, replay::cacheAtEvent(stage, event));
  return st;
}

}  // namespace reservoir::gui
