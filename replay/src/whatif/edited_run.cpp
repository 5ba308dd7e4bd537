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

namespace {

bool totalAssumed(const PreparedTrace& p) { return p.conformance.total_memory_source.empty(); }

// "the device's total memory (device_total in X.json)", or the assumption it rests on.
std::string totalText(const PreparedTrace& p) {
  const std::string& from = p.conformance.total_memory_source;
  if (from == "given") return "the device's total memory, as given";
  if (!from.empty()) return fmt::format("the device's total memory (device_total in {})", from);
  return fmt::format(
      "the device's total memory, assumed an H200's ({} bytes): no capacity is given and no capture "
      "JSON records device_total",
      p.total_memory);
}

// A memory fraction is a fraction of the device's total memory. A fraction asked for on a total
// that is only assumed would answer for a device nobody named (a 120 GiB trace passed a gate of
// 0.9 of an H200 that an 80 GB GPU could not run): refused. The recording's own fraction (from
// its capture JSON) is replayed on the assumed total, which a note names.
Status checkFractionTotal(const PreparedTrace& p, const EditedRunOptions& o, EditedRun& r) {
  if (!totalAssumed(p)) return {};
  if (o.fraction && *o.fraction < 1.0)
    return Status::usage(fmt::format(
        "a memory fraction of {} is a fraction of the device's total memory, which nothing here gives (no capacity "
        "is given and no capture JSON records device_total): an H200's {} bytes would only be assumed; give the "
        "device's capacity",
        *o.fraction, p.total_memory));
  if (p.fraction < 1.0)
    r.notes.push_back(fmt::format(
        "the capture JSON records a memory fraction of {} but not the device's total memory: the fraction is taken "
        "of an H200's {} bytes (assumed)",
        p.fraction, p.total_memory));
  return {};
}

}  // namespace

Expected<EditedRun> chooseEditedRun(const PreparedTrace& p, const EditedRunOptions& o) {
  EditedRun r;
  if (Status st = checkFractionTotal(p, o, r); !st.ok()) return st;
  r.recorded_config = p.recorded_config;
  r.recorded_fraction = p.fraction;
  r.config = o.settings.value_or(p.recorded_config);
  r.config_source = o.settings ? "the given settings" : "the recorded settings";
  r.fraction = o.fraction.value_or(p.fraction);
  r.fraction_source = o.fraction ? "the given fraction" : "the recorded fraction";
  std::string source;  // where the capacity comes from, before any overhead
  if (o.capacity) {
    r.capacity = o.capacity;
    source = "the given capacity";
  } else if (p.derived_capacity) {
    r.capacity = p.derived_capacity;
    source = "the recorded oom events (device_free + reserved)";
  } else if (o.overhead) {
    r.capacity = p.total_memory;
    source = totalText(p);
  } else if (r.fraction < 1.0 || r.recorded_fraction < 1.0) {
    // The fraction caps the run at a share of the device's total: that total is the capacity.
    r.capacity = p.total_memory;
    source = totalText(p);
  } else if (p.contradicted_capacity) {
    r.capacity_source = fmt::format(
        "unlimited (the recorded oom entries imply a capacity of {} bytes (device_free + reserved), but the "
        "recording itself reserves up to {} bytes: the memory outside PyTorch's cache changed, so no capacity is "
        "derived from them; give a capacity to predict out-of-memory)",
        *p.contradicted_capacity, p.recorded_peak_reserved);
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
