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
  // A value from the capture JSON is the capture's to answer for, not a point anyone gave.
  const auto blame = [&](const std::string& text, const std::string& why) {
    if (r.source == "given") return Status::error(fmt::format("{}: {}", text, why));
    return Status::error(
        fmt::format("the capture JSON {} says the peaks were reset after event {} "
                    "(reset_peaks_after_event), but {}",
                    r.source, *capture->reset_peaks_after_event, why));
  };
  for (const auto& text : texts) {
    auto point = parsePoint(text);
    if (!point) return blame(text, point.message());
    auto gaps = resolvePoint(*point, snapshot, device_index);
    if (!gaps) return blame(text, gaps.message());
    for (const auto& g : *gaps) r.boundaries.push_back(g.boundary);
  }
  if (!r.boundaries.empty() && r.source != "given")
    r.note = fmt::format("peak statistics reset at event boundary {} (reset_peaks_after_event in {})",
                         r.boundaries.front(), r.source);
  return r;
}

}  // namespace reservoir::replay
