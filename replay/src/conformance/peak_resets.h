// Finding where a program called torch.cuda.reset_peak_memory_stats(): a trace does not
// record the call, but when every event and the final layout match and only `.peak`
// statistics differ from the capture's, the reset position follows from the replay.
#pragma once

#include "reservoir/replay/conformance.h"

namespace reservoir::replay::detail {

// The options of a replay made inside a search (a reset's, a fraction's): the same device and
// environment, with no nested search, no program or request stream, no progress and no timeline.
[[nodiscard]] ConformanceOptions searchReplayOptions(const ConformanceOptions& options);

// True when the report is exact but for `.peak` statistics (the sign of a reset).
[[nodiscard]] bool onlyPeaksDiffer(const ConformanceReport& report);

// Looks for the resets that make every peak agree: one replay with a reset before every
// request gives each statistic's interval of fitting positions (and the aggregate timeline);
// the ends of their intersection are each verified with a full replay (should one not be
// exact, bisection over replays decides). On success `report` becomes the replay's with the
// first fitting reset, with a note naming the positions.
void findPeakReset(const traces::Snapshot& snapshot, std::size_t device_index, const ConformanceOptions& options,
                   ConformanceReport& report);

}  // namespace reservoir::replay::detail
