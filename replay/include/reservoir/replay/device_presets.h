// GPUs whose total memory is known as torch reports it (torch.cuda.mem_get_info()'s total):
// capacities a front end offers by name. Only figures someone has seen on the device are here;
// any other GPU is a capacity the user gives (a size, parsed as every capacity is).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "reservoir/core/units.h"

namespace reservoir::replay {

struct DevicePreset {
  enum class Source : std::uint8_t {
    kMeasured,  // measured with this project's tools on the device
    kObserved,  // seen reported by torch on such a device, not measured here
  };
  std::string_view name;  // "H200", "A100 80GB"
  ByteCount total = 0;    // bytes, as mem_get_info reports the device's total
  Source source = Source::kMeasured;
};

std::span<const DevicePreset> devicePresets();

// The preset's total as capacity text (plain bytes, "150109880320"): what a front end passes on
// as the capacity it was given, so a preset and the same figure typed agree.
std::string capacityText(const DevicePreset& preset);

}  // namespace reservoir::replay
