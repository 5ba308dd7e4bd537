#include "models/event_search.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "reservoir/replay/point.h"
#include "reservoir/simulator/sizes.h"

namespace reservoir::gui {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool isHex(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

Status addTerm(std::string_view term, EventQuery& q) {
  const std::string t = lower(term);
  if (t.rfind("0x", 0) == 0 && isHex(t.substr(2))) {
    q.address_prefixes.push_back(t.substr(2));
    return {};
  }
  if (t.rfind("action:", 0) == 0) {
    auto a = traces::parseAction(t.substr(7));
    if (!a) return Status::error("unknown action '" + t.substr(7) + "'");
    q.actions.push_back(*a);
    return {};
  }
  if (t.rfind("frame:", 0) == 0) {
    q.frames.push_back(t.substr(6));
    return {};
  }
  std::string_view rest = t;
  if (rest.rfind("size", 0) == 0) rest.remove_prefix(4);
  char op = '=';
  if (rest.rfind(">=", 0) == 0) {
    op = 'g';
    rest.remove_prefix(2);
  } else if (rest.rfind("<=", 0) == 0) {
    op = 'l';
    rest.remove_prefix(2);
  } else if (!rest.empty() && (rest[0] == '>' || rest[0] == '<' || rest[0] == '=' || rest[0] == ':')) {
    op = rest[0] == ':' ? '=' : rest[0];
    rest.remove_prefix(1);
  }
  if (!rest.empty() && std::isdigit(static_cast<unsigned char>(rest[0]))) {
    auto bytes = sim::parseSize(rest);
    if (!bytes) return Status::error("not a size: '" + std::string(rest) + "'");
    q.sizes.push_back(EventQuery::SizeTerm{op, *bytes});
    return {};
  }
  if (t.rfind("size", 0) == 0) return Status::error("size needs a value, e.g. size>1MiB");
  q.frames.push_back(t);
  return {};
}

bool sizeMatches(const EventQuery::SizeTerm& s, std::uint64_t v) {
  switch (s.op) {
    case '<': return v < s.bytes;
    case '>': return v > s.bytes;
    case 'l': return v <= s.bytes;
    case 'g': return v >= s.bytes;
    default: return v == s.bytes;
  }
}

// Per stack: does it hold a frame matching every frame term? (Cached by stack id.)
class FrameFilter {
 public:
  FrameFilter(const traces::Snapshot& snap, const std::vector<std::string>& terms) : snap_(snap), terms_(terms) {
    frame_.assign(snap.frames.size() * terms.size(), -1);
    stack_.assign(snap.stackCount(), -1);
    for (const auto& t : terms) specs_.push_back(pointSpec(t));
  }
  bool matches(StackId id) {
    if (terms_.empty()) return true;
    if (!id.valid() || id.value() >= stack_.size()) return false;
    auto& s = stack_[id.value()];
    if (s < 0) s = compute(id) ? 1 : 0;
    return s == 1;
  }

 private:
  bool frameHas(FrameId f, std::size_t t) {
    auto& c = frame_[f.value() * terms_.size() + t];
    if (c < 0) {
      const auto& fr = snap_.frames[f.value()];
      if (specs_[t])
        c = specs_[t]->matches(snap_, fr) ? 1 : 0;
      else
        c = (lower(snap_.str(fr.name)).find(terms_[t]) != std::string::npos ||
             lower(snap_.str(fr.filename)).find(terms_[t]) != std::string::npos)
                ? 1
                : 0;
    }
    return c == 1;
  }
  bool compute(StackId id) {
    const auto frames = snap_.stack(id);
    for (std::size_t t = 0; t < terms_.size(); ++t)
      if (std::none_of(frames.begin(), frames.end(), [&](FrameId f) { return frameHas(f, t); })) return false;
    return true;
  }
  // A term in the points' syntax (FILE:NAME, FILE:LINE, or a whole after:/before: point) is
  // matched as the what-if matches it (replay::FrameSpec): one syntax for both.
  static std::optional<replay::FrameSpec> pointSpec(std::string_view t) {
    for (std::string_view prefix : {"after:", "before:"})
      if (t.starts_with(prefix)) t.remove_prefix(prefix.size());
    if (const auto hash = replay::occurrenceSuffix(t); hash != std::string_view::npos) t = t.substr(0, hash);
    if (t.find(':') == std::string_view::npos) return std::nullopt;
    auto spec = replay::parseFrameSpec(t);
    if (!spec) return std::nullopt;
    return *spec;
  }
  const traces::Snapshot& snap_;
  const std::vector<std::string>& terms_;
  std::vector<std::optional<replay::FrameSpec>> specs_;
  std::vector<std::int8_t> frame_, stack_;
};

}  // namespace

Expected<EventQuery> parseEventQuery(std::string_view text) {
  EventQuery q;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    std::size_t j = i;
    while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
    if (j > i) {
      Status s = addTerm(text.substr(i, j - i), q);
      if (!s.ok()) return s;
    }
    i = j;
  }
  return q;
}

std::vector<std::uint32_t> matchEvents(const traces::Snapshot& snap, const traces::DeviceTrace& trace,
                                       const EventQuery& q) {
  std::vector<std::uint32_t> out;
  FrameFilter frames(snap, q.frames);
  char buf[24];
  for (std::size_t e = 0; e < trace.events.size(); ++e) {
    const auto& ev = trace.events[e];
    if (!q.actions.empty() && std::find(q.actions.begin(), q.actions.end(), ev.action) == q.actions.end()) continue;
    if (!std::all_of(q.sizes.begin(), q.sizes.end(), [&](const auto& s) { return sizeMatches(s, ev.size); })) continue;
    if (!q.address_prefixes.empty()) {
      std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(ev.addr));
      const std::string_view hex(buf);
      if (!std::all_of(q.address_prefixes.begin(), q.address_prefixes.end(),
                       [&](const std::string& p) { return hex.rfind(p, 0) == 0; }))
        continue;
    }
    if (!frames.matches(ev.stack)) continue;
    out.push_back(static_cast<std::uint32_t>(e));
  }
  return out;
}

}  // namespace reservoir::gui
