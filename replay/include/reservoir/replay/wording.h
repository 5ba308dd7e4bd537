// What the library's messages point the user to (an input to give, a command to run), as data,
// and how a front end words it. The library never names a command-line flag: a message that says
// "give a capacity" asks the front end's Wording for the words ("--capacity" on the command line,
// "capacity=" in Python, "a capacity" where no front end is named), and the results that miss an
// input say which one as a field (Input, inputName: "capacity" in JSON).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace reservoir::replay {

// The inputs a user can give (the CLI's flags, the Python package's keywords, the GUI's fields).
enum class Input : std::uint8_t {
  kCapacity,
  kOverhead,
  kFraction,
  kSet,       // the edited run's allocator settings
  kSettings,  // the recorded device's allocator settings
  kCleanup,
  kRelease,
  kProbe,
  kDemand,
  kResetPeaks,
  kAddressModel,
  kMaxPeakReserved,
  kMinimize,
  kJobs,
  kMaxCalls,
  kSteps,
  kFrom,  // scale: a capture at known parameters
  kTo,    // scale: the target's parameters
  kPeakAllocated,  // info: run the conformance replay for the allocated peak
};
// The input's name in results and JSON ("capacity", "reset_peaks", "max_peak_reserved").
std::string_view inputName(Input input);

// The commands a message may tell the user to run.
enum class Command : std::uint8_t {
  kInfo,   // the snapshot's facts and final segments
  kCheck,  // the model against the recording, event by event
};

// How a front end names inputs and commands in the library's messages. Plain function pointers:
// a Wording is a static table of the front end, copied freely.
struct Wording {
  // The input as an error message's label: "--capacity: not a size", "capacity: not a size".
  std::string (*label)(Input input);
  // The input as a message tells the user to give it: "give --capacity", "give capacity=".
  std::string (*give)(Input input);
  // The input with a value: "--reset-peaks event:7", "reset_peaks=['event:7']".
  std::string (*give_value)(Input input, std::string_view value);
  // A command to run: "'reservoir check'", "trace.check()".
  std::string (*run)(Command command);
};

// Plain words that name no front end ("capacity: not a size", "give a capacity", "run the
// event-by-event check"): the default where a caller gives no Wording (the GUI, tests).
const Wording& plainWording();

// `wording` or, when null, plainWording(): for options that carry a Wording pointer.
inline const Wording& wordingOr(const Wording* wording) { return wording ? *wording : plainWording(); }

}  // namespace reservoir::replay
