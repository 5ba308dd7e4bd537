// The what-if edit flags shared by whatif, gate, export and replay.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "reservoir/replay/option_text.h"
#include "reservoir/replay/whatif.h"

namespace reservoir::cli {

// The edited run's device: --set, --capacity, --overhead, --fraction (whatif, gate, export,
// replay, sweep).
// The texts are parsed by the library (replay/option_text.h), which the Python package shares.
using EditedRunFlags = replay::EditedRunText;
using EditOptions = replay::WhatIfText;

void addEditedRunFlags(CLI::App* app, EditedRunFlags* flags);
// Parses the flags once (the settings stay parsed from here on); errors name the flag.
Expected<replay::EditedRunOptions> makeEditedRunOptions(const EditedRunFlags& flags);

void addEditOptions(CLI::App* app, EditOptions* opts);
// Turns the flags into WhatIfOptions; errors name the flag.
Expected<replay::WhatIfOptions> makeWhatIfOptions(const EditOptions& opts);

}  // namespace reservoir::cli
