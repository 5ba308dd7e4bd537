// The edited run's device, decided once: the usable capacity (with the overhead outside the
// PyTorch cache taken off), the memory fraction and the allocator settings, each with where
// it came from. Every entry point that replays edits (whatif, sweep, gate, export, replay,
// the GUI) builds one EditedRun from the prepared trace and the user's options, so that the
// same options give the same figures everywhere.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reservoir/core/units.h"
#include "reservoir/replay/conformance.h"
#include "reservoir/replay/wording.h"
#include "reservoir/simulator/alloc_config.h"

namespace reservoir::replay {

struct PreparedTrace;
struct RunSettings;

// What the user asks of the edited run's device (all optional).
struct EditedRunOptions {
  std::optional<sim::AllocatorConfig> settings;  // allocator settings (default: the recorded ones)
  std::optional<ByteCount> capacity;             // the device's memory (default: recorded ooms, else unlimited)
  ByteCount overhead = 0;                        // memory outside the PyTorch cache (CUDA context, NCCL, ...)
  std::optional<double> fraction;                // memory fraction (default: the recorded one)
  // How messages name inputs (a capacity to give, a check to run): the front end's that parsed
  // these options (option_text.h); null: plain words.
  const Wording* wording = nullptr;
};

// The environment a trace is prepared in for these options: a capacity is also the device's
// total memory (what a memory fraction is a fraction of) when the environment gives none.
ReplayEnvironment editedRunEnvironment(const ReplayEnvironment& env, const EditedRunOptions& options);

struct EditedRun {
  // The device's memory the capacity comes from (before the overhead), and the bytes the
  // cache may hold (capacity - overhead); both empty when unlimited.
  std::optional<ByteCount> capacity;
  std::optional<ByteCount> usable;
  std::string capacity_source;
  double fraction = 1.0;
  std::string fraction_source;
  sim::AllocatorConfig config;
  std::string config_source;
  // The recording's own settings and fraction (the baseline run), with the same capacity.
  sim::AllocatorConfig recorded_config;
  double recorded_fraction = 1.0;
  // What the reports should say about the choice (a recorded fraction taken of an assumed total).
  std::vector<std::string> notes;

  // Run settings for the edited run and for the unedited baseline (config, fraction, usable);
  // the caller adds the address model, analyses and outputs.
  [[nodiscard]] RunSettings edited() const;
  [[nodiscard]] RunSettings baseline() const;
};

// Decides the edited run for `prepared` (prepared in editedRunEnvironment(env, options)). An
// overhead that leaves no memory under the capacity chosen (given, derived from oom events, or
// the device's total) is a usage error: every request would fail, which answers nothing. When a
// memory fraction below 1 caps a run and nothing else gives a capacity, the capacity is the
// device's total memory (the fraction's base), named with where it comes from; a fraction given
// for a device whose total is only assumed (no capacity, no capture JSON's device_total) is a
// usage error, and the recording's own fraction on an assumed total gets a note.
Expected<EditedRun> chooseEditedRun(const PreparedTrace& prepared, const EditedRunOptions& options);

}  // namespace reservoir::replay
