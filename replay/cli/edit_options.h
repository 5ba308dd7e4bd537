// The what-if edit flags shared by whatif, gate, export and replay.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "reservoir/replay/whatif.h"

namespace reservoir::cli {

// The edited run's device: --set, --capacity, --overhead, --fraction (whatif, gate, export,
// replay, sweep).
struct EditedRunFlags {
  std::string set;
  std::string capacity, overhead;
  std::optional<double> fraction;
};

struct EditOptions {
  std::vector<std::string> cleanup, release, probe, demand, reset_peaks;
  EditedRunFlags device;
  std::string address_model = "recorded";
};

void addEditedRunFlags(CLI::App* app, EditedRunFlags* flags);
// Parses the flags once (the settings stay parsed from here on); errors name the flag.
Expected<replay::EditedRunOptions> makeEditedRunOptions(const EditedRunFlags& flags);

void addEditOptions(CLI::App* app, EditOptions* opts);
// Turns the flags into WhatIfOptions; errors name the flag.
Expected<replay::WhatIfOptions> makeWhatIfOptions(const EditOptions& opts);

}  // namespace reservoir::cli
