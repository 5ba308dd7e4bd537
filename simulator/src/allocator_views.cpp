// Read-only views of the model's state: the snapshot's segment list and divergence aids.
#include <algorithm>

#include "allocator_impl.h"

namespace reservoir::sim {

std::vector<SegmentView> CachingAllocator::Impl::segments() const {
  std::vector<SegmentView> out;
  for (BlockRef head = 0; head < arena.size(); ++head) {
    const Block& h = arena[head];
    if (!h.live || !h.mapped) continue;
    if (h.prev != kNil && arena[h.prev].mapped) continue;  // not the first block of a mapped run
    SegmentView s;
    s.address = h.ptr;
    s.stream = h.stream;
    s.is_large = !pools[h.pool].is_small;
    s.is_expandable = h.expandable != kNil;
    s.pool = poolIdOf(h.pool);
    s.tag = h.segment_tag;
    for (BlockRef b = head; b != kNil && arena[b].mapped; b = arena[b].next) {
      const Block& blk = arena[b];
      BlockInfoView bi;
      bi.address = blk.ptr;
      bi.size = blk.size;
      bi.requested_size = blk.requested_size;
      bi.tag = blk.tag;
      const bool active = blk.allocated || blk.event_count > 0 || !blk.stream_uses.empty();
      bi.state = blk.allocated ? traces::BlockState::kActiveAllocated
                 : active      ? traces::BlockState::kActivePendingFree
                               : traces::BlockState::kInactive;
      s.total_size += blk.size;
      if (blk.allocated) s.allocated_size += blk.size;
      if (active) {
        s.active_size += blk.size;
        s.requested_size += blk.requested_size;
      }
      s.blocks.push_back(bi);
    }
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const SegmentView& a, const SegmentView& b) { return a.address < b.address; });
  return out;
}

}  // namespace reservoir::sim
