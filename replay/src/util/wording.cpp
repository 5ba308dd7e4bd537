// The library's own words for inputs and commands (wording.h), where no front end is named.
#include "reservoir/replay/wording.h"

#include <fmt/format.h>

namespace reservoir::replay {
namespace {

std::string plainLabel(Input input) { return std::string(inputName(input)); }

std::string plainGive(Input input) {
  switch (input) {
    case Input::kCapacity: return "a capacity";
    case Input::kOverhead: return "an overhead";
    case Input::kFraction: return "a memory fraction";
    case Input::kSet: return "allocator settings for the edited run";
    case Input::kSettings: return "the recorded device's allocator settings";
    case Input::kCleanup: return "a cleanup point";
    case Input::kRelease: return "a release";
    case Input::kProbe: return "a probe point";
    case Input::kDemand: return "a demand";
    case Input::kResetPeaks: return "a peak-reset point";
    case Input::kAddressModel: return "an address model";
    case Input::kMaxPeakReserved: return "a budget on peak reserved";
    case Input::kMinimize: return "an objective";
    case Input::kJobs: return "a thread count";
    case Input::kMaxCalls: return "a cap on empty_cache calls";
    case Input::kSteps: return "the number of training steps";
    case Input::kFrom: return "an input capture with its parameters";
    case Input::kTo: return "the target's parameters";
    case Input::kPeakAllocated: return "the request for the allocated peak";
  }
  return std::string(inputName(input));
}

std::string plainGiveValue(Input input, std::string_view value) {
  return fmt::format("{} {}", inputName(input), value);
}

std::string plainRun(Command command) {
  switch (command) {
    case Command::kInfo: return "the snapshot's summary (info)";
    case Command::kCheck: return "the event-by-event check (check)";
  }
  return "check";
}

}  // namespace

std::string_view inputName(Input input) {
  switch (input) {
    case Input::kCapacity: return "capacity";
    case Input::kOverhead: return "overhead";
    case Input::kFraction: return "fraction";
    case Input::kSet: return "set";
    case Input::kSettings: return "settings";
    case Input::kCleanup: return "cleanup";
    case Input::kRelease: return "release";
    case Input::kProbe: return "probe";
    case Input::kDemand: return "demand";
    case Input::kResetPeaks: return "reset_peaks";
    case Input::kAddressModel: return "address_model";
    case Input::kMaxPeakReserved: return "max_peak_reserved";
    case Input::kMinimize: return "minimize";
    case Input::kJobs: return "jobs";
    case Input::kMaxCalls: return "max_calls";
    case Input::kSteps: return "steps";
    case Input::kFrom: return "from";
    case Input::kTo: return "to";
    case Input::kPeakAllocated: return "peak_allocated";
  }
  return "input";
}

const Wording& plainWording() {
  static const Wording wording{&plainLabel, &plainGive, &plainGiveValue, &plainRun};
  return wording;
}

}  // namespace reservoir::replay
