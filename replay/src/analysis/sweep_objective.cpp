// The sweep's objective, the training steps a trace shows, and the time price of a cleanup.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "reservoir/replay/sweep.h"

namespace reservoir::replay {

std::string SweepObjective::text() const {
  switch (kind) {
    case Kind::kPeak: return "peak";
    case Kind::kReservedAt: return "reserved:" + (point ? point->text : std::string());
    case Kind::kPeakIn: return "peak-in:" + annotation;
  }
  return "peak";
}

std::string SweepObjective::description() const {
  switch (kind) {
    case Kind::kPeak: return "peak reserved";
    case Kind::kReservedAt: return "reserved at " + (point ? point->text : std::string());
    case Kind::kPeakIn: return "peak reserved inside " + annotation;
  }
  return "peak reserved";
}

Expected<SweepObjective> parseSweepObjective(std::string_view text) {
  SweepObjective o;
  if (text.empty() || text == "peak") return o;
  if (text.starts_with("peak-in:")) {
    o.kind = SweepObjective::Kind::kPeakIn;
    o.annotation = std::string(text.substr(8));
    if (o.annotation.empty()) return Status::error("objective 'peak-in:': name an annotation (peak-in:NAME)");
    return o;
  }
  const std::string_view point_text = text.starts_with("reserved:") ? text.substr(9) : text;
  auto p = parsePoint(point_text);
  if (!p)
    return Status::error(
        fmt::format("objective '{}': expected peak, reserved:POINT or peak-in:ANNOTATION ({})", text, p.message()));
  o.kind = SweepObjective::Kind::kReservedAt;
  o.point = std::move(*p);
  return o;
}

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "ProfilerStep#12" -> "ProfilerStep".
std::string withoutOccurrence(const std::string& name) { return name.substr(0, occurrenceSuffix(name)); }

bool isStepName(const std::string& name) {
  const std::string n = lower(name);
  for (const char* s : {"profilerstep", "train_step", "training_step", "train_one_step", "train step", "training step"})
    if (n.find(s) != std::string::npos) return true;
  return false;
}

std::optional<TrainingSteps> stepsFromAnnotations(const traces::Snapshot& snap, std::int64_t device) {
  std::map<std::string, std::size_t> starts;
  for (const auto& a : snap.annotations)
    if (a.stage == "START" && (a.device < 0 || a.device == device) && isStepName(a.name))
      ++starts[withoutOccurrence(a.name)];
  if (starts.empty()) return std::nullopt;
  const auto best =
      std::max_element(starts.begin(), starts.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
  return TrainingSteps{best->second, "annotation " + best->first};
}

bool isStepFrameName(std::string_view name) {
  const std::string n = lower(name);
  return n == "train_step" || n == "training_step" || n == "train_one_step" || n == "train_batch";
}

// Runs of events under a train-step frame. Only an event of the same program stack (the same
// outermost frame) without that frame ends a run: events without frames, or with the frames
// of another thread (the backward pass and its hooks run on autograd's thread), do not. The
// outermost such frame (fewest runs) wins.
std::optional<TrainingSteps> stepsFromFrames(const traces::Snapshot& snap, std::size_t device_index) {
  struct RunState {
    std::size_t runs = 0;
    bool inside = false;
    std::uint32_t outermost = 0;
  };
  std::vector<std::int8_t> is_step(snap.frames.size(), -1);
  std::map<std::uint32_t, RunState> runs;  // frame name id -> its runs
  for (const auto& e : snap.devices[device_index].events) {
    const auto frames = snap.stack(e.stack);
    if (frames.empty()) continue;
    const std::uint32_t outermost = frames.back().value();
    std::vector<std::uint32_t> here;
    for (FrameId f : frames) {
      auto& known = is_step[f.value()];
      if (known < 0) known = isStepFrameName(snap.str(snap.frames[f.value()].name)) ? 1 : 0;
      if (known) here.push_back(snap.frames[f.value()].name.value());
    }
    for (auto& [name, state] : runs)
      if (state.inside && state.outermost == outermost && std::find(here.begin(), here.end(), name) == here.end())
        state.inside = false;
    for (std::uint32_t name : here) {
      auto& state = runs[name];
      if (!state.inside) ++state.runs;
      state.inside = true;
      state.outermost = outermost;
    }
  }
  std::optional<TrainingSteps> best;
  for (const auto& [name, state] : runs)
    if (!best || state.runs < best->count)
      best = TrainingSteps{state.runs, "frame " + std::string(snap.str(StringId(name)))};
  return best;
}

double gib(std::uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0); }

std::uint64_t beyond(std::uint64_t edited, std::uint64_t baseline) { return edited > baseline ? edited - baseline : 0; }

}  // namespace

std::optional<TrainingSteps> detectTrainingSteps(const traces::Snapshot& snap, std::size_t device_index) {
  if (device_index >= snap.devices.size()) return std::nullopt;
  if (auto a = stepsFromAnnotations(snap, snap.devices[device_index].device)) return a;
  return stepsFromFrames(snap, device_index);
}

double cleanupPriceSeconds(const RunResult& baseline, const RunResult& edited, std::size_t inserted_calls,
                           const CleanupPriceModel& m) {
  const DriverWork& b = baseline.driver;
  const DriverWork& e = edited.driver;
  return static_cast<double>(inserted_calls) * m.sync_seconds +
         static_cast<double>(beyond(e.cuda_frees, b.cuda_frees)) * m.cuda_free_seconds +
         static_cast<double>(beyond(e.cuda_mallocs, b.cuda_mallocs)) * m.cuda_malloc_seconds +
         gib(beyond(e.bytes_unmapped, b.bytes_unmapped)) * m.unmap_seconds_per_gib +
         gib(beyond(e.bytes_mapped, b.bytes_mapped)) * m.map_seconds_per_gib;
}

}  // namespace reservoir::replay
