// The command-line forms of what-if edits.
#include <fmt/format.h>

#include "reservoir/replay/whatif.h"
#include "reservoir/simulator/sizes.h"

namespace reservoir::replay {
namespace {

Expected<Edit> atPoint(Edit::Kind kind, std::string_view text, std::string_view point_text) {
  auto p = parsePoint(point_text);
  if (!p) return p.status();
  Edit e;
  e.kind = kind;
  e.text = std::string(text);
  e.point = *p;
  return e;
}

// Splits "LEFT@POINT" at the '@' that begins a point (points contain no '@').
Expected<std::pair<std::string_view, std::string_view>> splitAt(std::string_view text, const char* what) {
  const auto at = text.rfind('@');
  if (at == std::string_view::npos || at == 0 || at + 1 == text.size())
    return Status::error(fmt::format("{} '{}': expected {}", what, text,
                                     std::string_view(what) == "--demand" ? "BYTES@POINT" : "SELECTOR@POINT"));
  return std::make_pair(text.substr(0, at), text.substr(at + 1));
}

}  // namespace

Expected<Edit> parseCleanup(std::string_view text) { return atPoint(Edit::Kind::kCleanup, text, text); }
Expected<Edit> parseProbe(std::string_view text) { return atPoint(Edit::Kind::kProbe, text, text); }
Expected<Edit> parseResetPeaks(std::string_view text) { return atPoint(Edit::Kind::kResetPeaks, text, text); }

Expected<Edit> parseRelease(std::string_view text) {
  auto parts = splitAt(text, "--release");
  if (!parts) return parts.status();
  auto selector = parseFrameSpec(parts->first);
  if (!selector) return Status::error(fmt::format("--release '{}': {}", text, selector.message()));
  auto e = atPoint(Edit::Kind::kRelease, text, parts->second);
  if (!e) return e;
  e->selector = *selector;
  return e;
}

Expected<Edit> parseDemand(std::string_view text) {
  auto parts = splitAt(text, "--demand");
  if (!parts) return parts.status();
  auto bytes = sim::parseSize(parts->first);
  if (!bytes) return Status::error(fmt::format("--demand '{}': '{}' is not a size (e.g. 40GiB)", text, parts->first));
  auto e = atPoint(Edit::Kind::kDemand, text, parts->second);
  if (!e) return e;
  e->bytes = *bytes;
  return e;
}

}  // namespace reservoir::replay
