#include "conformance/missing_fraction.h"
#include "conformance/peak_resets.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace reservoir::replay::detail {
namespace {

using traces::Action;

constexpr std::size_t kMaxTries = 12;

bool fractionKnown(const ConformanceOptions& options) {
  return options.env.fraction || (options.env.capture && options.env.capture->fraction);
}

bool releases(Action a) { return a == Action::kSegmentFree || a == Action::kSegmentUnmap; }

// The bounds the recording puts on the fraction's limit (fraction x total): at least the highest
// reserved bytes (a fraction caps what the cache holds); below reserved + size at an oom that the
// device had room for (device_free >= size: only a limit refuses it).
struct Bounds {
  std::int64_t peak = 0;
  std::optional<std::int64_t> below;
  std::optional<std::size_t> roomy_oom;  // the first such oom's event
};

Bounds recordedBounds(const traces::DeviceTrace& trace) {
  Bounds b;
  std::int64_t reserved = 0;
  for (std::size_t i = 0; i < trace.events.size(); ++i) {
    const auto& e = trace.events[i];
    const auto size = static_cast<std::int64_t>(e.size);
    if (e.action == Action::kSegmentAlloc || e.action == Action::kSegmentMap) reserved += size;
    if (releases(e.action)) reserved -= size;
    b.peak = std::max(b.peak, reserved);
    // An oom's addr is the device's free bytes (traces/snapshot.h).
    if (e.action == Action::kOom && e.addr >= e.size) {
      if (!b.roomy_oom) b.roomy_oom = i;
      b.below = std::min(b.below.value_or(std::numeric_limits<std::int64_t>::max()), reserved + size);
    }
  }
  return b;
}

// Why this divergence is of the kind a fraction explains, or "" when it is not.
std::string fractionKind(const traces::Snapshot& snapshot, std::size_t device_index, const ConformanceReport& report,
                         const Bounds& bounds) {
  const auto& events = snapshot.devices[device_index].events;
  if (report.first_divergence && report.first_divergence->event_index < events.size()) {
    const std::size_t i = report.first_divergence->event_index;
    const Action a = events[i].action;
    const std::string& sim = report.first_divergence->simulated;
    const bool model_releases = sim.starts_with("segment_free") || sim.starts_with("segment_unmap");
    if (releases(a) || model_releases)
      return fmt::format(
          "at event {} the recording and the model release cached memory differently ({} recorded, {} modelled): "
          "garbage collection (garbage_collection_threshold) and release-and-retry act against a fraction's limit",
          i, report.first_divergence->expected, sim);
    if (a == Action::kOom && events[i].addr >= events[i].size)  // the device had room: a limit refused it
      return fmt::format("at event {} the recording runs out of memory with {} bytes free on the device", i,
                         events[i].addr);
  }
  if (!report.exact() && bounds.roomy_oom)
    return fmt::format("the recording runs out of memory at event {} with {} bytes free on the device",
                       *bounds.roomy_oom, events[*bounds.roomy_oom].addr);
  return {};
}

// Two-decimal fractions, as programs write them: those inside the recording's bounds first.
std::vector<double> candidates(const Bounds& b, ByteCount total) {
  std::vector<double> inside, rest;
  const double t = static_cast<double>(total);
  for (int k = 1; k < 100; ++k) {
    const double f = k / 100.0;
    const double limit = f * t;
    if (limit < static_cast<double>(b.peak)) continue;
    (b.below && limit >= static_cast<double>(*b.below) ? rest : inside).push_back(f);
  }
  inside.insert(inside.end(), rest.begin(), rest.end());
  // A fraction computed by the program (not two decimals): the middle of the bounds the ooms
  // give (an oom's size is the request's, not the segment's: a bound, not the limit itself),
  // after the first few two-decimal ones.
  constexpr std::size_t kTwoDecimalsFirst = 3;
  if (b.below && *b.below > b.peak && t > 0)
    inside.insert(inside.begin() + static_cast<std::ptrdiff_t>(std::min(inside.size(), kTwoDecimalsFirst)),
                  std::round(static_cast<double>(b.peak + *b.below) / 2.0 / t * 1e6) / 1e6);
  if (inside.size() > kMaxTries) inside.resize(kMaxTries);
  return inside;
}

}  // namespace

void findMissingFraction(const traces::Snapshot& snapshot, std::size_t device_index,
                         const ConformanceOptions& options, ConformanceReport& report) {
  if (report.exact() || fractionKnown(options) || report.total_memory == 0) return;
  const Bounds bounds = recordedBounds(snapshot.devices[device_index]);
  std::string why = fractionKind(snapshot, device_index, report, bounds);
  if (why.empty()) return;
  MissingFraction hint{std::move(why), std::nullopt, 0};
  ConformanceOptions inner = searchReplayOptions(options);
  inner.find_peak_resets = options.find_peak_resets;  // a fraction's replay may still find its reset
  inner.env.total_memory = report.total_memory;
  std::optional<ConformanceReport> found;
  for (const double f : candidates(bounds, report.total_memory)) {
    if (options.cancel && options.cancel->load()) break;
    inner.env.fraction = f;
    ++hint.tried;
    auto r = runConformance(snapshot, device_index, inner);
    if (r && r->exact()) {
      hint.fraction = f;
      break;
    }
  }
  const Wording& wording = wordingOr(options.env.wording);
  std::string note = fmt::format(
      "the run may have set a memory fraction (torch.cuda.set_per_process_memory_fraction), which a snapshot does "
      "not record: {}; ",
      hint.why);
  if (hint.fraction) {
    note += fmt::format("{} makes the replay exact",
                        wording.give_value(Input::kFraction, fmt::format("{}", *hint.fraction)));
    if (report.total_memory_source.empty())
      note += fmt::format(" (of {} bytes, an H200's, assumed: give {} too on another device)", report.total_memory,
                          wording.give(Input::kCapacity));
  } else {
    note += fmt::format("none of the {} fractions tried made the replay exact (give {} if the run set one)", hint.tried,
                        wording.give(Input::kFraction));
  }
  report.notes.push_back(std::move(note));
  report.missing_fraction = std::move(hint);
}

}  // namespace reservoir::replay::detail
