// The what-if edit flags shared by whatif, gate, export and replay.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "reservoir/replay/whatif.h"

namespace reservoir::cli {

struct EditOptions {
  std::vector<std::string> cleanup, release, probe, demand, reset_peaks;
  std::string set;
  std::string capacity, overhead;
  std::optional<double> fraction;
  std::string address_model = "recorded";
};

void addEditOptions(CLI::App* app, EditOptions* opts);
// Turns the flags into WhatIfOptions; errors name the flag.
Expected<replay::WhatIfOptions> makeWhatIfOptions(const EditOptions& opts);

}  // namespace reservoir::cli
