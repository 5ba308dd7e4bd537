// What-if runs on a trace the session already prepared: runWhatIf's report without running
// the conformance replay again.
#include "reservoir/replay/session.h"

namespace reservoir::replay {

Expected<WhatIfReport> runWhatIfPrepared(const ModelStage& stage, const WhatIfOptions& options) {
  // A capacity can change the environment the trace is prepared in (its total memory).
  const ReplayEnvironment env = stage.trace.environment();
  if (editedRunEnvironment(env, options).total_memory != env.total_memory)
    return runWhatIf(stage.trace.snapshot, stage.prepared.device_index, env, options);
  return runWhatIfOn(stage.prepared, options);
}

}  // namespace reservoir::replay
