// The options as text, parsed once for every front end (option_text.h).
#include "reservoir/replay/option_text.h"

#include <fmt/format.h>

#include <cstdlib>

#include "reservoir/simulator/sizes.h"
#include "reservoir/traces/reader.h"

namespace reservoir::replay {
namespace {

Expected<sim::ByteCount> sizeOption(std::string_view prefix, std::string_view name, const std::string& text) {
  auto c = sim::parseSize(text);
  if (!c) return Status::usage(fmt::format("{}{}: not a size: '{}' (e.g. 141GiB, 150109880320)", prefix, name, text));
  return *c;
}

Status checkFraction(std::string_view prefix, const std::optional<double>& fraction) {
  if (fraction && !(*fraction >= 0.0 && *fraction <= 1.0))
    return Status::usage(fmt::format("{}fraction: {} is not in [0, 1]", prefix, *fraction));
  return {};
}

}  // namespace

Expected<EditedRunOptions> parseEditedRunOptions(const EditedRunText& t, std::string_view prefix) {
  EditedRunOptions o;
  if (!t.set.empty()) {
    auto cfg = sim::parseAllocConf(t.set);
    if (!cfg) return Status::usage(fmt::format("{}set '{}': {}", prefix, t.set, cfg.message()));
    o.settings = std::move(*cfg);
  }
  if (!t.capacity.empty()) {
    auto c = sizeOption(prefix, "capacity", t.capacity);
    if (!c) return c.status();
    o.capacity = *c;
  }
  if (!t.overhead.empty()) {
    auto c = sizeOption(prefix, "overhead", t.overhead);
    if (!c) return c.status();
    o.overhead = *c;
  }
  if (o.capacity && o.overhead >= *o.capacity)
    return Status::usage(
        fmt::format("{}overhead {} is not below {}capacity {}: the edited run would have no memory "
                    "for PyTorch's cache",
                    prefix, t.overhead.empty() ? std::string("0") : t.overhead, prefix, t.capacity));
  if (Status st = checkFraction(prefix, t.fraction); !st.ok()) return st;
  o.fraction = t.fraction;
  return o;
}

Expected<WhatIfOptions> parseWhatIfOptions(const WhatIfText& t, std::string_view prefix) {
  auto device = parseEditedRunOptions(t.device, prefix);
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
      if (!e) return Status::usage(fmt::format("{}{}: {}", prefix, editKindName(kind), e.message()));
      w.edits.push_back(std::move(*e));
    }
  if (t.address_model == "driver")
    w.address_model = AddressModel::kDriver;
  else if (t.address_model == "recorded" || t.address_model.empty())
    w.address_model = AddressModel::kRecorded;
  else
    return Status::usage(
        fmt::format("{}address-model: '{}': expected 'recorded' or 'driver'", prefix, t.address_model));
  return w;
}

Expected<ReplayEnvironment> replayEnvironment(const Trace& trace, const RecordedDeviceText& t,
                                              std::string_view prefix) {
  ReplayEnvironment env = trace.environment();
  if (Status st = checkFraction(prefix, t.fraction); !st.ok()) return st;
  env.fraction = t.fraction;
  if (!t.capacity.empty()) {
    auto c = sizeOption(prefix, "capacity", t.capacity);
    if (!c) return c.status();
    env.total_memory = *c;
  }
  if (!t.settings.empty()) {
    auto cfg = sim::parseAllocConf(t.settings);
    if (!cfg) return Status::usage(fmt::format("{}settings: {}", prefix, cfg.message()));
    env.settings = t.settings;
  }
  return env;
}

Expected<GateConditions> gateConditions(const std::string& max_peak_reserved, const WhatIfOptions& options,
                                        std::string_view prefix) {
  GateConditions conditions;
  if (!max_peak_reserved.empty()) {
    conditions.max_peak_reserved = sim::parseSize(max_peak_reserved);
    if (!conditions.max_peak_reserved)
      return Status::usage(fmt::format("{}max-peak-reserved: not a size: '{}'", prefix, max_peak_reserved));
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
    return Status::usage(fmt::format("RESERVOIR_MAX_MEMORY='{}' is not a size (e.g. 8GiB, or 0 for no cap)", text));
  traces::setDefaultReadMemoryCap(*bytes);
  return {};
}

}  // namespace reservoir::replay
