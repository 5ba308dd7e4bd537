// The edited run's device: capacity (minus overhead), fraction and settings, decided once.
#include "reservoir/replay/edited_run.h"

#include <fmt/format.h>

#include "reservoir/replay/whatif.h"

namespace reservoir::replay {

ReplayEnvironment editedRunEnvironment(const ReplayEnvironment& env, const EditedRunOptions& options) {
  ReplayEnvironment out = env;
  if (options.capacity && !out.total_memory) out.total_memory = options.capacity;
  return out;
}

Expected<EditedRun> chooseEditedRun(const PreparedTrace& p, const EditedRunOptions& o) {
  EditedRun r;
  std::string source;  // where the capacity comes from, before any overhead
  if (o.capacity) {
    r.capacity = o.capacity;
    source = "the given capacity";
  } else if (p.derived_capacity) {
    r.capacity = p.derived_capacity;
    source = "the recorded oom events (device_free + reserved)";
  } else if (o.overhead) {
    r.capacity = p.total_memory;
    source = "the device's total memory";
  } else if (p.oom_without_device_free) {
    r.capacity_source = fmt::format(
        "unlimited (the recorded oom entries have no 'device_free', so no capacity is derived from them; give "
        "{} to predict out-of-memory)",
        wordingOr(o.wording).give(Input::kCapacity));
  } else {
    r.capacity_source = "unlimited (no oom recorded; give a capacity to predict out-of-memory)";
  }
  if (r.capacity) {
    if (o.overhead >= *r.capacity)
      return Status::usage(
          fmt::format("the overhead ({} bytes) is not below the capacity ({} bytes, {}): the edited run "
                      "would have no memory for PyTorch's cache",
                      o.overhead, *r.capacity, source));
    r.usable = *r.capacity - o.overhead;
    r.capacity_source = o.overhead ? source + " minus the overhead" : source;
  }

  r.recorded_config = p.recorded_config;
  r.recorded_fraction = p.fraction;
  r.config = o.settings.value_or(p.recorded_config);
  r.config_source = o.settings ? "the given settings" : "the recorded settings";
  r.fraction = o.fraction.value_or(p.fraction);
  r.fraction_source = o.fraction ? "the given fraction" : "the recorded fraction";
  return r;
}

RunSettings EditedRun::edited() const {
  RunSettings s;
  s.config = config;
  s.fraction = fraction;
  s.usable = usable;
  return s;
}

RunSettings EditedRun::baseline() const {
  RunSettings s = edited();  // the same device, the recording's own settings and fraction
  s.config = recorded_config;
  s.fraction = recorded_fraction;
  return s;
}

}  // namespace reservoir::replay
