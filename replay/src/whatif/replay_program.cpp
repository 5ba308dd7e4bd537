#include "reservoir/replay/whatif.h"

#include <fmt/format.h>

#include <algorithm>

#include "reservoir/traces/request_stream.h"
#include "whatif/run_engine.h"

namespace reservoir::replay {

using traces::Action;

using detail::Runner;

RunResult replayProgram(const PreparedTrace& prepared, const std::vector<ResolvedEdit>& edits,
                        const RunSettings& settings) {
  Runner runner(prepared, edits, settings);
  RunResult result = runner.run();
  if (settings.analyze_peak && result.peak_reserved.op != kNoOp) {
    RunSettings at = settings;
    at.stop_after_op = result.peak_reserved.op;
    at.analyze_peak = false;
    at.keep_timeline = false;
    at.keep_curves = false;
    at.compare_with_recording = false;
    Runner again(prepared, edits, at);
    again.run();
    result.at_peak = again.analyze();
  }
  return result;
}

}  // namespace reservoir::replay
