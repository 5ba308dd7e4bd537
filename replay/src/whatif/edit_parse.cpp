// The text forms of what-if edits ("cleanup after:x.py:load", "demand 4GiB@event:10"): one
// parser for the command line and the GUI. Errors quote the text and name no flag.
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
Expected<std::pair<std::string_view, std::string_view>> splitAt(std::string_view text, const char* form) {
  const auto at = text.rfind('@');
  if (at == std::string_view::npos || at == 0 || at + 1 == text.size())
    return Status::error(fmt::format("'{}': expected {}", text, form));
  return std::make_pair(text.substr(0, at), text.substr(at + 1));
}

}  // namespace

Expected<Edit> parseCleanup(std::string_view text) { return atPoint(Edit::Kind::kCleanup, text, text); }
Expected<Edit> parseProbe(std::string_view text) { return atPoint(Edit::Kind::kProbe, text, text); }
Expected<Edit> parseResetPeaks(std::string_view text) { return atPoint(Edit::Kind::kResetPeaks, text, text); }

Expected<Edit> parseRelease(std::string_view text) {
  auto parts = splitAt(text, "SELECTOR@POINT");
  if (!parts) return parts.status();
  auto selector = parseFrameSpec(parts->first);
  if (!selector) return Status::error(fmt::format("'{}': {}", text, selector.message()));
  auto e = atPoint(Edit::Kind::kRelease, text, parts->second);
  if (!e) return e;
  e->selector = *selector;
  return e;
}

Expected<Edit> parseDemand(std::string_view text) {
  auto parts = splitAt(text, "BYTES@POINT");
  if (!parts) return parts.status();
  auto bytes = sim::parseSize(parts->first);
  if (!bytes) return Status::error(fmt::format("'{}': '{}' is not a size (e.g. 40GiB)", text, parts->first));
  auto e = atPoint(Edit::Kind::kDemand, text, parts->second);
  if (!e) return e;
  e->bytes = *bytes;
  return e;
}

namespace {

constexpr std::pair<Edit::Kind, std::string_view> kKindNames[] = {
    {Edit::Kind::kCleanup, "cleanup"}, {Edit::Kind::kRelease, "release"},        {Edit::Kind::kProbe, "probe"},
    {Edit::Kind::kDemand, "demand"},   {Edit::Kind::kResetPeaks, "reset-peaks"},
};

}  // namespace

std::string_view editKindName(Edit::Kind kind) {
  for (const auto& [k, name] : kKindNames)
    if (k == kind) return name;
  return "edit";
}

std::optional<Edit::Kind> editKindFromName(std::string_view name) {
  for (const auto& [k, n] : kKindNames)
    if (n == name) return k;
  return std::nullopt;
}

Expected<Edit> parseEdit(Edit::Kind kind, std::string_view text) {
  switch (kind) {
    case Edit::Kind::kCleanup: return parseCleanup(text);
    case Edit::Kind::kRelease: return parseRelease(text);
    case Edit::Kind::kProbe: return parseProbe(text);
    case Edit::Kind::kDemand: return parseDemand(text);
    case Edit::Kind::kResetPeaks: return parseResetPeaks(text);
  }
  return Status::error("unknown edit kind");
}

Expected<Edit> parseEdit(std::string_view kind_and_text) {
  const auto isSpace = [](char c) { return c == ' ' || c == '\t'; };
  while (!kind_and_text.empty() && isSpace(kind_and_text.front())) kind_and_text.remove_prefix(1);
  while (!kind_and_text.empty() && isSpace(kind_and_text.back())) kind_and_text.remove_suffix(1);
  std::size_t space = 0;
  while (space < kind_and_text.size() && !isSpace(kind_and_text[space])) ++space;
  const std::string_view name = kind_and_text.substr(0, space);
  std::string_view rest = kind_and_text.substr(space);
  while (!rest.empty() && isSpace(rest.front())) rest.remove_prefix(1);
  const auto kind = editKindFromName(name);
  if (!kind)
    return Status::error(
        fmt::format("unknown edit '{}' (cleanup, release, probe, demand, reset-peaks followed by its text)", name));
  auto e = parseEdit(*kind, rest);
  if (!e) return Status::error(fmt::format("{}: {}", name, e.message()));
  return e;
}

}  // namespace reservoir::replay
