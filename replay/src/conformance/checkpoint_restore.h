// Allocations made by a CUDA-graph tree restoring its private pool to a checkpoint
// (torch._inductor.cudagraph_trees' apply_checkpoint_execution_state_in_allocator, calling
// setCheckpointPoolState): each takes the cached block at the checkpoint's address, not the best
// fit, so the model places them at the recorded address (CachingAllocator::mallocAt).
#pragma once

#include <vector>

#include "reservoir/traces/snapshot.h"

namespace reservoir::replay::detail {

// Per stack id: whether the stack passes through a checkpoint restore (a Python frame of
// cudagraph_trees' restore, or the allocator's own setCheckpointPoolState with C++ frames).
std::vector<bool> checkpointRestoreStacks(const traces::Snapshot& snapshot);

}  // namespace reservoir::replay::detail
