#include "reservoir/replay/recording_pools.h"

#include <algorithm>
#include <vector>

namespace reservoir::replay {
namespace {

bool answersMalloc(const traces::TraceEvent& e) {
  return e.action == traces::Action::kAlloc || e.action == traces::Action::kOom;
}

}  // namespace

RecordedPoolsAnnotation annotateRecordedPools(traces::Snapshot& snapshot, std::size_t device_index,
                                              const EditedProgram& program) {
  RecordedPoolsAnnotation a;
  std::vector<traces::PoolId> pools;  // per malloc, in order
  for (const BackendOp& op : program.ops)
    if (op.kind == BackendOpKind::kMalloc) pools.push_back(op.pool.value_or(traces::PoolId{}));
  a.mallocs = pools.size();
  if (device_index >= snapshot.devices.size()) return a;
  auto& events = snapshot.devices[device_index].events;
  bool named = false;
  for (const traces::TraceEvent& e : events)
    if (answersMalloc(e)) {
      ++a.entries;
      named = named || snapshot.extra(e).has_pool;
    }
  if (program.private_pools.empty() || named || a.entries != a.mallocs) return a;
  std::size_t k = 0;
  for (traces::TraceEvent& e : events) {
    if (!answersMalloc(e)) continue;
    const traces::PoolId pool = pools[k++];
    snapshot.editExtra(e, [&](traces::EventExtra& x) {
      x.has_pool = true;
      x.pool = pool;
    });
  }
  a.applied = true;
  return a;
}

}  // namespace reservoir::replay
