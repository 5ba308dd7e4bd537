// What-if runs on a trace the session already prepared: runWhatIf's report without running
// the conformance replay again.
#include "reservoir/replay/session.h"

namespace reservoir::replay {

Expected<WhatIfReport> runWhatIfPrepared(const LoadedTrace& loaded, const PreparedTrace& p,
                                         const WhatIfOptions& options) {
  // A capacity changes the environment the trace is prepared in (its total memory).
  if (options.capacity) return runWhatIf(loaded.snapshot, loaded.device_index, loaded.environment(), options);
  return runWhatIfOn(p, options);
}

}  // namespace reservoir::replay
