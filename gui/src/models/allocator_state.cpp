#include "models/allocator_state.h"

#include <algorithm>

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
  // Free blocks in a segment that live blocks keep cannot be released; the live blocks of a
  // mostly free segment are what pins it. An expandable segment unmaps its free pages
  // instead (up to page rounding), so nothing pins it.
  if (s.expandable) {
    st.releasable += static_cast<std::int64_t>(s.free_bytes);
  } else if (live > 0 && s.free_bytes > 0) {
    s.pinned = s.free_bytes >= live;
    for (auto& b : std::span(st.blocks).subspan(s.first_block, s.block_count)) {
      if (b.kind == BlockKind::kCachedFree)
        b.kind = BlockKind::kInactiveSplit;
      else
        b.pinning = s.pinned;
    }
    st.pinned_free += static_cast<std::int64_t>(s.free_bytes);
  } else if (live == 0) {
    st.releasable += static_cast<std::int64_t>(s.size);
  }
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

}  // namespace reservoir::gui
