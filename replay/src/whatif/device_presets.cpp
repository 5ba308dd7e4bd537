// The GPUs whose total memory a front end offers by name (device_presets.h).
#include "reservoir/replay/device_presets.h"

#include <array>

namespace reservoir::replay {

std::span<const DevicePreset> devicePresets() {
  static constexpr std::array<DevicePreset, 2> presets{{
      {"H200", 150109880320ull, DevicePreset::Source::kMeasured},
      {"A100 80GB", 85097971712ull, DevicePreset::Source::kObserved},
  }};
  return presets;
}

std::string capacityText(const DevicePreset& preset) { return std::to_string(preset.total); }

}  // namespace reservoir::replay
