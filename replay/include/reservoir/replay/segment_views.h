// The model's segments (sim::SegmentView) and the snapshot's (traces::SegmentInfo + BlockInfo),
// converted one way and the other in one place: exports, synthetic traces, backend comparisons
// and the tests all use these.
#pragma once

#include <cstdint>
#include <functional>

#include "reservoir/simulator/allocator.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::replay {

// The snapshot's segment `s` (with its blocks) as the model describes one; block tags are 0.
sim::SegmentView segmentView(const traces::Snapshot& snapshot, const traces::SegmentInfo& s);

// Appends the model's segment `v` and its blocks to `out` on CUDA device `device`. `stack_of`,
// when given, names the stack of an allocation tag (the segment's, and each active block's;
// inactive blocks get `stack_of(0)`).
void appendSegment(traces::Snapshot& out, const sim::SegmentView& v, std::int64_t device,
                   const std::function<StackId(std::uint64_t tag)>& stack_of = {});

}  // namespace reservoir::replay
