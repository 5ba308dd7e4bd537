// What-if runs on a trace the session already prepared: runWhatIf's report without running
// the conformance replay again.
#include "reservoir/replay/session.h"

namespace reservoir::replay {

Expected<WhatIfReport> runWhatIfPrepared(const LoadedTrace& loaded, const PreparedTrace& p,
                                         const WhatIfOptions& options) {
  // A capacity can change the environment the trace is prepared in (its total memory).
  const ReplayEnvironment env = loaded.environment();
  if (editedRunEnvironment(env, options).total_memory != env.total_memory)
    return runWhatIf(loaded.snapshot, loaded.device_index, env, options);
  return runWhatIfOn(p, options);
}

}  // namespace reservoir::replay
