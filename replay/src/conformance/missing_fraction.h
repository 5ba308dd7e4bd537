// A run made under set_per_process_memory_fraction and checked without the fraction (the
// snapshot does not record it) diverges where the fraction acted: a release of cached blocks
// (garbage collection against the fraction's limit, release-and-retry) the model does not make,
// or an out-of-memory while the device had room. That divergence is named, and a few fractions
// from the recording's own bounds are replayed to find one that makes the replay exact.
#pragma once

#include "reservoir/replay/conformance.h"

namespace reservoir::replay::detail {

// Sets report.missing_fraction (and a note worded for the front end) when the fraction is not
// known and the report diverges as a fraction explains.
void findMissingFraction(const traces::Snapshot& snapshot, std::size_t device_index,
                         const ConformanceOptions& options, ConformanceReport& report);

}  // namespace reservoir::replay::detail
