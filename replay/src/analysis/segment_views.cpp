#include "reservoir/replay/segment_views.h"

namespace reservoir::replay {

sim::SegmentView segmentView(const traces::Snapshot& snapshot, const traces::SegmentInfo& s) {
  sim::SegmentView v;
  v.address = s.address;
  v.total_size = s.total_size;
  v.allocated_size = s.allocated_size;
  v.active_size = s.active_size;
  v.requested_size = s.requested_size;
  v.stream = s.stream;
  v.is_large = s.is_large;
  v.is_expandable = s.is_expandable;
  v.pool = s.pool;
  for (const traces::BlockInfo& b : snapshot.blocksOf(s))
    v.blocks.push_back(sim::BlockInfoView{b.address, b.size, b.requested_size, b.state, 0});
  return v;
}

void appendSegment(traces::Snapshot& out, const sim::SegmentView& v, std::int64_t device,
                   const std::function<StackId(std::uint64_t tag)>& stack_of) {
  traces::SegmentInfo si;
  si.device = device;
  si.address = v.address;
  si.total_size = v.total_size;
  si.allocated_size = v.allocated_size;
  si.active_size = v.active_size;
  si.requested_size = v.requested_size;
  si.stream = v.stream;
  si.is_large = v.is_large;
  si.is_expandable = v.is_expandable;
  si.pool = v.pool;
  if (stack_of) si.stack = stack_of(v.tag);
  si.first_block = static_cast<std::uint32_t>(out.blocks.size());
  si.block_count = static_cast<std::uint32_t>(v.blocks.size());
  for (const auto& b : v.blocks) {
    traces::BlockInfo bi;
    bi.address = b.address;
    bi.size = b.size;
    bi.requested_size = b.requested_size;
    bi.state = b.state;
    if (stack_of) bi.stack = stack_of(b.state == traces::BlockState::kInactive ? 0 : b.tag);
    out.blocks.push_back(bi);
  }
  out.segments.push_back(si);
}

}  // namespace reservoir::replay
