// The options as text, parsed once for every front end (option_text.h).
#include "reservoir/replay/option_text.h"

#include <fmt/format.h>

#include <cstdlib>

#include "reservoir/simulator/sizes.h"
#include "reservoir/traces/reader.h"

namespace reservoir::replay {
namespace {

// A size option's bytes; the error names the option and says why, plainly ("not a size: 'x'", or
// that '80G' is ambiguous between GiB and GB).
Expected<sim::ByteCount> sizeOption(const Wording& wording, Input input, const std::string& text) {
  auto c = sim::parseSize(text);
  if (!c)
    return Status::usage(
        fmt::format("{}: {} (e.g. 141GiB, 80GB, 150109880320)", wording.label(input), sim::sizeError(text)));
  return *c;
}

Status checkFraction(const Wording& wording, const std::optional<double>& fraction) {
  if (fraction && !(*fraction >= 0.0 && *fraction <= 1.0))
    return Status::usage(fmt::format("{}: {} is not in [0, 1]", wording.label(Input::kFraction), *fraction));
  return {};
}

Input editInput(Edit::Kind kind) {
  switch (kind) {
    case Edit::Kind::kCleanup: return Input::kCleanup;
    case Edit::Kind::kRelease: return Input::kRelease;
    case Edit::Kind::kProbe: return Input::kProbe;
    case Edit::Kind::kDemand: return Input::kDemand;
    case Edit::Kind::kResetPeaks: return Input::kResetPeaks;
  }
  return Input::kCleanup;
}

}  // namespace

Expected<EditedRunOptions> parseEditedRunOptions(const EditedRunText& t, const Wording& wording) {
  EditedRunOptions o;
  o.wording = &wording;
  if (t.set) {  // the whole PYTORCH_CUDA_ALLOC_CONF: "" is torch's defaults
    auto cfg = sim::parseAllocConf(*t.set);
    if (!cfg) return Status::usage(fmt::format("{} '{}': {}", wording.label(Input::kSet), *t.set, cfg.message()));
    o.settings = std::move(*cfg);
  }
  if (!t.capacity.empty()) {
    auto c = sizeOption(wording, Input::kCapacity, t.capacity);
    if (!c) return c.status();
    o.capacity = *c;
  }
  if (!t.overhead.empty()) {
    auto c = sizeOption(wording, Input::kOverhead, t.overhead);
    if (!c) return c.status();
    o.overhead = *c;
  }
  if (o.capacity && o.overhead >= *o.capacity)
    return Status::usage(
        fmt::format("{} {} is not below {} {}: the edited run would have no memory for PyTorch's cache",
                    wording.label(Input::kOverhead), t.overhead.empty() ? std::string("0") : t.overhead,
                    wording.label(Input::kCapacity), t.capacity));
  if (Status st = checkFraction(wording, t.fraction); !st.ok()) return st;
  o.fraction = t.fraction;
  return o;
}

Expected<WhatIfOptions> parseWhatIfOptions(const WhatIfText& t, const Wording& wording) {
  auto device = parseEditedRunOptions(t.device, wording);
  if (!device) return device.status();
  WhatIfOptions w;
  static_cast<EditedRunOptions&>(w) = std::move(*device);
  // Each option is an edit kind of the same name; parseEdit parses it, the option names the error.
  using Kind = Edit::Kind;
  const std::pair<Kind, const std::vector<std::string>*> kinds[] = {
      {Kind::kCleanup, &t.cleanup}, {Kind::kRelease, &t.release},        {Kind::kProbe, &t.probe},
      {Kind::kDemand, &t.demand},   {Kind::kResetPeaks, &t.reset_peaks},
  };
  for (const auto& [kind, texts] : kinds)
    for (const auto& text : *texts) {
      auto e = parseEdit(kind, text);
      if (!e) return Status::usage(fmt::format("{}: {}", wording.label(editInput(kind)), e.message()));
      w.edits.push_back(std::move(*e));
    }
  if (t.address_model == "driver")
    w.address_model = AddressModel::kDriver;
  else if (t.address_model == "recorded")
    w.address_model = AddressModel::kRecorded;
  else if (t.address_model == "anchored" || t.address_model.empty())
    w.address_model = AddressModel::kAnchored;
  else
    return Status::usage(fmt::format("{}: '{}': expected 'anchored', 'recorded' or 'driver'",
                                     wording.label(Input::kAddressModel), t.address_model));
  return w;
}

Expected<ReplayEnvironment> replayEnvironment(const Trace& trace, const RecordedDeviceText& t, const Wording& wording) {
  ReplayEnvironment env = trace.environment();
  env.wording = &wording;
  if (Status st = checkFraction(wording, t.fraction); !st.ok()) return st;
  env.fraction = t.fraction;
  if (!t.capacity.empty()) {
    auto c = sizeOption(wording, Input::kCapacity, t.capacity);
    if (!c) return c.status();
    env.total_memory = *c;
  }
  if (t.settings) {  // the whole PYTORCH_CUDA_ALLOC_CONF: "" is torch's defaults
    auto cfg = sim::parseAllocConf(*t.settings);
    if (!cfg) return Status::usage(fmt::format("{}: {}", wording.label(Input::kSettings), cfg.message()));
    env.settings = t.settings;
  }
  return env;
}

Expected<GateConditions> gateConditions(const std::string& max_peak_reserved, const WhatIfOptions& options,
                                        const Wording& wording) {
  GateConditions conditions;
  conditions.wording = &wording;
  if (!max_peak_reserved.empty()) {
    conditions.max_peak_reserved = sim::parseSize(max_peak_reserved);
    if (!conditions.max_peak_reserved)
      return Status::usage(
          fmt::format("{}: {}", wording.label(Input::kMaxPeakReserved), sim::sizeError(max_peak_reserved)));
  }
  conditions.fraction = options.fraction;
  for (const auto& e : options.edits)
    if (e.kind == Edit::Kind::kDemand) conditions.demands.push_back(e);
  return conditions;
}

Expected<std::vector<std::size_t>> summaryDevices(const traces::Snapshot& snap,
                                                  std::optional<std::int64_t> cuda_device) {
  std::vector<std::size_t> devices;
  if (cuda_device) {
    auto d = chooseDevice(snap, cuda_device);
    if (!d) return d.status();
    devices.push_back(*d);
    return devices;
  }
  const std::size_t busiest = snap.devices.empty() ? 0 : snap.busiestDevice();  // once: linear, not quadratic
  for (std::size_t i = 0; i < snap.devices.size(); ++i)
    if (!snap.devices[i].events.empty() || i == busiest) devices.push_back(i);
  return devices;
}

Status applyMemoryCapFromEnvironment() {
  const char* text = std::getenv("RESERVOIR_MAX_MEMORY");
  if (!text || !*text) return {};
  const auto bytes = sim::parseSize(text);
  if (!bytes)
    return Status::usage(fmt::format("RESERVOIR_MAX_MEMORY: {} (e.g. 8GiB, or 0 for no cap)", sim::sizeError(text)));
  traces::setDefaultReadMemoryCap(*bytes);
  return {};
}

void applySnapshotCacheFromEnvironment() {
  const char* text = std::getenv("RESERVOIR_CACHE");
  const std::string value = text ? text : "";
  for (const char* off : {"off", "0", "no", "none", "false"})
    if (value == off) return traces::setDefaultSnapshotCache(std::nullopt);
  traces::SnapshotCache cache;
  cache.folder = value.empty() ? traces::standardCacheFolder() : value;
  traces::setDefaultSnapshotCache(std::move(cache));
}

}  // namespace reservoir::replay
