// Checks on a snapshot the pickle reader has built, before anyone computes with it: values no
// real capture can hold are refused (they would turn into wrong answers presented as answers).
#pragma once

#include "reservoir/core/status.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::traces::detail {

// More device traces than any machine has: a damaged or hostile file.
inline constexpr std::size_t kMaxDevices = 1024;
// Sizes and addresses at or above 2^62 (or negative numbers, which read as such) are not real.
inline constexpr std::uint64_t kMaxByteValue = 1ull << 62;

// Fails on the first value out of range, naming where it is (device_traces[d] entry i,
// segments[i] and their blocks).
Status validateSnapshot(const Snapshot& snapshot);

// Counts the segments whose device has no entry in 'device_traces' (when it lists any): no
// device's view shows them, so they are a data-loss anomaly, not silently left out.
void noteSegmentsOfNoDevice(Snapshot& snapshot);

}  // namespace reservoir::traces::detail
