#include <fmt/format.h>

#include "reservoir/replay/conformance.h"

namespace reservoir::replay {

std::string describeEvent(const traces::Snapshot& snapshot, const traces::TraceEvent& e) {
  const traces::StreamValue stream = snapshot.stream(e);
  if (e.action == traces::Action::kOom)
    return fmt::format("oom size={} stream={} device_free={}", e.size, stream, e.addr);
  return fmt::format("{} addr={:#x} size={} stream={}", traces::actionName(e.action), e.addr, e.size, stream);
}

std::string describeEvent(const sim::SimEvent& e) {
  if (e.action == traces::Action::kOom)
    return fmt::format("oom size={} stream={} device_free={}", e.size, e.stream, e.addr);
  return fmt::format("{} addr={:#x} size={} stream={}", traces::actionName(e.action), e.addr, e.size, e.stream);
}

std::string describeStack(const traces::Snapshot& snapshot, StackId stack, std::size_t max_frames) {
  const auto frames = snapshot.stack(stack);
  if (frames.empty()) return "(no frames recorded)";
  std::string out;
  for (std::size_t i = 0; i < frames.size() && i < max_frames; ++i) {
    const traces::Frame& f = snapshot.frames[frames[i].value()];
    out += fmt::format("{}{} ({}:{})", i ? " <- " : "", snapshot.str(f.name), snapshot.str(f.filename), f.line);
    if (f.fx.valid()) {  // the FX node the frame ran for: op and name
      std::string fx;
      for (const auto& [k, v] : traces::fxFields(snapshot.str(f.fx)))
        if (k == "fx_node_op" || k == "fx_node_name") fx += fmt::format("{}{}", fx.empty() ? "" : " ", v);
      if (!fx.empty()) out += " [fx " + fx + "]";
    }
  }
  if (frames.size() > max_frames) out += fmt::format(" <- ... ({} more)", frames.size() - max_frames);
  return out;
}

}  // namespace reservoir::replay
