// A real allocator's own recording says which private pool a request went to only where torch
// records it (`pool_id`, after 2.11) or, for an allocation, through the address of a pool's
// segment. An out-of-memory entry has no address, and the backend's recording no stacks to
// route it by, so the model would take it for a default-pool request. The backend knows which
// pool it ran each request in: this gives the recording's entries that knowledge.
#pragma once

#include <cstddef>

#include "reservoir/replay/edited_program.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::replay {

struct RecordedPoolsAnnotation {
  std::size_t mallocs = 0;  // the program's malloc requests
  std::size_t entries = 0;  // the recording's alloc and oom entries
  bool applied = false;     // the counts agreed and the entries now name their pools
};

// Gives the k-th alloc or oom entry of `snapshot`'s device `device_index` the pool of the k-th
// malloc of `program` (the default pools where it has none), as `pool_id` would. Only when the
// two counts agree, the program has private pools and no entry names its pool already;
// otherwise the snapshot is left as it was.
RecordedPoolsAnnotation annotateRecordedPools(traces::Snapshot& snapshot, std::size_t device_index,
                                              const EditedProgram& program);

}  // namespace reservoir::replay
