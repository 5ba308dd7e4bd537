// Where the recorded program reset its peak statistics: the one rule check, the Python package
// and the tests use.
#include <fmt/format.h>

#include "reservoir/replay/conformance.h"
#include "reservoir/replay/point.h"

namespace reservoir::replay {

Expected<PeakResets> choosePeakResets(const traces::Snapshot& snapshot, std::size_t device_index,
                                      const CaptureFacts* capture, const std::vector<std::string>& points) {
  PeakResets r;
  std::vector<std::string> texts = points;
  if (!texts.empty()) {
    r.source = "given";
  } else if (capture && capture->reset_peaks_after_event) {
    texts.push_back(fmt::format("event:{}", *capture->reset_peaks_after_event));
    r.source = capture->path;
  }
  for (const auto& text : texts) {
    auto point = parsePoint(text);
    if (!point) return Status::error(point.message());
    auto gaps = resolvePoint(*point, snapshot, device_index);
    if (!gaps) return Status::error(fmt::format("{}: {}", text, gaps.message()));
    for (const auto& g : *gaps) r.boundaries.push_back(g.boundary);
  }
  if (!r.boundaries.empty() && r.source != "given")
    r.note = fmt::format("peak statistics reset at event boundary {} (reset_peaks_after_event in {})",
                         r.boundaries.front(), r.source);
  return r;
}

}  // namespace reservoir::replay
