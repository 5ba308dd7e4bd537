// End-of-replay comparisons: the model's final segments against the snapshot's, and its
// statistics against what the capture measured.
#pragma once

#include <vector>

#include "reservoir/replay/conformance.h"

namespace reservoir::replay::detail {

void compareLayout(const traces::Snapshot& snap, std::int64_t device, const std::vector<sim::SegmentView>& model,
                   ConformanceReport& report);
void compareStats(const sim::DeviceStats& stats, const CaptureFacts* capture, ConformanceReport& report);

}  // namespace reservoir::replay::detail
