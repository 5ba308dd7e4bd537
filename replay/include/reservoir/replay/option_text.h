// The options every front end takes as text (the CLI's flags, the Python package's keywords),
// parsed here once so that the rules and the errors are the same everywhere. `wording` is how
// the front end names an option in an error (wording.h): "--capacity: not a size: 'x'" on the
// command line, "capacity: not a size: 'x'" in Python, "reset_peaks: ..." there too; the
// options parsed keep the wording, so that later messages (a capacity to give, a check to run)
// use the same front end's words.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reservoir/core/status.h"
#include "reservoir/replay/edited_run.h"
#include "reservoir/replay/gate.h"
#include "reservoir/replay/trace.h"
#include "reservoir/replay/whatif.h"
#include "reservoir/replay/wording.h"

namespace reservoir::replay {

// The edited run's device: set (PYTORCH_CUDA_ALLOC_CONF syntax), capacity, overhead (sizes as
// PyTorch prints them, or bytes), fraction (0..1). Empty texts are not given, but for `set`:
// given, it replaces the recorded PYTORCH_CUDA_ALLOC_CONF as a whole, as the environment variable
// does (keys it leaves out take torch's defaults), so an empty `set` is torch's defaults; not
// given (nullopt), the recorded settings.
struct EditedRunText {
  std::optional<std::string> set;
  std::string capacity, overhead;
  std::optional<double> fraction;
};
Expected<EditedRunOptions> parseEditedRunOptions(const EditedRunText& text, const Wording& wording = plainWording());

// The edits (each kind's texts, parsed by parseEdit) and the device, and the address model
// ("anchored", the default, "recorded" or "driver").
struct WhatIfText {
  std::vector<std::string> cleanup, release, probe, demand, reset_peaks;
  EditedRunText device;
  std::string address_model = "anchored";
};
Expected<WhatIfOptions> parseWhatIfOptions(const WhatIfText& text, const Wording& wording = plainWording());

// The recorded device, where the capture's facts are missing or wrong: fraction, capacity (its
// total memory) and settings (the PYTORCH_CUDA_ALLOC_CONF to replay with: as a whole, as the
// environment variable is read, so empty is torch's defaults; nullopt: the recorded ones).
struct RecordedDeviceText {
  std::optional<double> fraction;
  std::string capacity;
  std::optional<std::string> settings;
};
// The environment to replay `trace` in: these options over the capture's facts.
Expected<ReplayEnvironment> replayEnvironment(const Trace& trace, const RecordedDeviceText& text,
                                              const Wording& wording = plainWording());

// The gate's conditions: the budget (a size; empty: none), the what-if's demands and fraction.
Expected<GateConditions> gateConditions(const std::string& max_peak_reserved, const WhatIfOptions& options,
                                        const Wording& wording = plainWording());

// The devices `info` summarises: the one asked for, else every device with events (and the
// busiest, so an empty snapshot still has one).
Expected<std::vector<std::size_t>> summaryDevices(const traces::Snapshot& snap,
                                                  std::optional<std::int64_t> cuda_device);

// RESERVOIR_MAX_MEMORY (a size, e.g. "8GiB"; "0" for none) as the reader's memory cap for this
// process (traces::setDefaultReadMemoryCap); unset leaves the default. A value that is not a size
// is a usage error naming the variable. Every front end (CLI, Python, GUI) calls it once at start.
Status applyMemoryCapFromEnvironment();

// Sets the snapshot cache every read uses (traces/snapshot_cache.h) from RESERVOIR_CACHE: unset or
// empty, the standard folder (~/.cache/reservoir); "off" (or 0, no, none, false), none; else the
// folder it names.
void applySnapshotCacheFromEnvironment();

}  // namespace reservoir::replay
