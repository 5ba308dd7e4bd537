#include "reservoir/replay/point.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

namespace reservoir::replay {
namespace {

bool allDigits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

bool endsWithAtBoundary(std::string_view path, std::string_view suffix) {
  if (suffix.size() > path.size()) return false;
  if (path.substr(path.size() - suffix.size()) != suffix) return false;
  return path.size() == suffix.size() || path[path.size() - suffix.size() - 1] == '/' || suffix.front() == '/';
}

std::optional<std::int64_t> toInt(std::string_view s) {
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

bool FrameSpec::matches(const traces::Snapshot& snap, const traces::Frame& f) const {
  if (!name.empty() && snap.str(f.name) != name) return false;
  if (line && f.line != *line) return false;
  if (!file.empty() && !endsWithAtBoundary(snap.str(f.filename), file)) return false;
  return true;
}

Expected<FrameSpec> parseFrameSpec(std::string_view text) {
  FrameSpec spec;
  spec.text = std::string(text);
  if (text.empty()) return Status::error("empty frame selector (use NAME, FILE:NAME or FILE:LINE)");
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    spec.name = std::string(text);
    return spec;
  }
  spec.file = std::string(text.substr(0, colon));
  const std::string_view last = text.substr(colon + 1);
  if (spec.file.empty() || last.empty())
    return Status::error(fmt::format("bad frame selector '{}' (use NAME, FILE:NAME or FILE:LINE)", text));
  if (allDigits(last))
    spec.line = toInt(last);
  else
    spec.name = std::string(last);
  return spec;
}

StackMatcher::StackMatcher(const traces::Snapshot& snap, FrameSpec spec)
    : snap_(snap), spec_(std::move(spec)), frame_match_(snap.frames.size(), -1), stack_match_(snap.stackCount(), -1) {}

bool StackMatcher::decide(StackId stack) {
  auto& cached = stack_match_[stack.value()];
  bool any = false;
  for (FrameId f : snap_.stack(stack)) {
    auto& fm = frame_match_[f.value()];
    if (fm < 0) fm = spec_.matches(snap_, snap_.frames[f.value()]) ? 1 : 0;
    if (fm) {
      any = true;
      break;
    }
  }
  cached = any ? 1 : 0;
  return any;
}

std::size_t occurrenceSuffix(std::string_view name) {
  const auto hash = name.rfind('#');
  return hash != std::string_view::npos && allDigits(name.substr(hash + 1)) ? hash : std::string_view::npos;
}

Expected<Point> parsePoint(std::string_view text) {
  Point p;
  p.text = std::string(text);
  auto body_of = [&](std::string_view prefix) { return text.substr(prefix.size()); };
  auto split_occurrence = [&](std::string_view body) -> Expected<std::string_view> {
    const auto hash = occurrenceSuffix(body);
    if (hash == std::string_view::npos) return body;  // no run number ('#' inside a name stays in it)
    auto k = toInt(body.substr(hash + 1));
    if (!k || *k < 1) return Status::error(fmt::format("point '{}': '#k' needs a run number k >= 1", text));
    p.occurrence = static_cast<int>(*k);
    return body.substr(0, hash);
  };
  if (text.starts_with("after:") || text.starts_with("before:")) {
    p.kind = text.starts_with("after:") ? Point::Kind::kAfter : Point::Kind::kBefore;
    auto body = split_occurrence(body_of(p.kind == Point::Kind::kAfter ? "after:" : "before:"));
    if (!body) return body.status();
    auto spec = parseFrameSpec(*body);
    if (!spec) return Status::error(fmt::format("point '{}': {}", text, spec.message()));
    p.frame = *spec;
    return p;
  }
  if (text.starts_with("annotation:")) {
    auto body = split_occurrence(body_of("annotation:"));
    if (!body) return body.status();
    const auto colon = body->rfind(':');
    const std::string_view stage = colon == std::string_view::npos ? std::string_view{} : body->substr(colon + 1);
    if (stage != "start" && stage != "end")
      return Status::error(fmt::format("point '{}': use annotation:NAME:start or annotation:NAME:end", text));
    p.kind = stage == "start" ? Point::Kind::kAnnotationStart : Point::Kind::kAnnotationEnd;
    p.annotation = std::string(body->substr(0, colon));
    return p;
  }
  if (text.starts_with("event:") || text.starts_with("time:")) {
    const bool event = text.starts_with("event:");
    auto v = toInt(body_of(event ? "event:" : "time:"));
    if (!v || *v < 0) return Status::error(fmt::format("point '{}': expected a non-negative integer", text));
    p.kind = event ? Point::Kind::kEvent : Point::Kind::kTime;
    p.value = *v;
    return p;
  }
  return Status::error(
      fmt::format("bad point '{}': use after:SPEC, before:SPEC (SPEC = NAME, FILE:NAME or FILE:LINE, optionally #k), "
                  "annotation:NAME:start|end, event:N or time:US",
                  text));
}

std::vector<std::string> closestFrameNames(const traces::Snapshot& snap, std::string_view query, std::size_t count) {
  std::set<std::string> names;
  for (const auto& f : snap.frames) {
    std::string_view file = snap.str(f.filename);
    const auto slash = file.rfind('/');
    if (slash != std::string_view::npos) file = file.substr(slash + 1);
    names.insert(fmt::format("{}:{}", file, snap.str(f.name)));
  }
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& n : names) {
    const std::string_view short_name = std::string_view(n).substr(n.find(':') + 1);
    scored.emplace_back(std::min(editDistance(query, n), editDistance(query, short_name)), n);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && i < count; ++i) out.push_back(scored[i].second);
  return out;
}

// A call of the function is a run of events whose stacks hold its frame. Events that cannot
// belong to the calling thread do not end a run: an event with no Python frame (the autograd
// engine's backward thread, C++ threads) and one whose outermost frame differs from the run's
// (another Python thread: its stack starts at its own entry point).
std::vector<FrameCall> frameCalls(const Point& p, const traces::Snapshot& snap, const EventStacks& stacks) {
  StackMatcher matcher(snap, p.frame);
  std::vector<FrameCall> calls;
  bool in_call = false;
  FrameId thread_root;  // outermost frame of the call's first event
  auto outermost = [&](StackId s) {
    const std::uint32_t i = s.valid() ? s.value() : 0;
    return i < stacks.outermost.size() ? stacks.outermost[i] : FrameId{};
  };
  // A run of events with one stack acts as its first event would, up to its last (EventStacks).
  for (std::size_t r = 0; r < stacks.runs.size(); ++r) {
    const StackId stack = stacks.runs[r].stack;  // forward frames for backward-pass entries
    const bool m = matcher.matches(stack);
    if (m && !in_call) {
      calls.push_back(FrameCall{stacks.runs[r].first, stacks.runs[r].first});
      thread_root = outermost(stack);
    }
    if (m) {
      calls.back().last = stacks.lastOf(r);
      in_call = true;
      continue;
    }
    const FrameId root = outermost(stack);
    const bool other_thread = !root.valid() || root != thread_root;
    if (!other_thread) in_call = false;
  }
  return calls;
}

std::vector<Gap> gapsOfCalls(const Point& p, const std::vector<FrameCall>& calls) {
  std::vector<Gap> gaps;
  for (std::size_t r = 0; r < calls.size(); ++r) {
    if (p.occurrence && static_cast<std::size_t>(*p.occurrence) != r + 1) continue;
    if (p.kind == Point::Kind::kAfter)
      gaps.push_back(Gap{calls[r].last + 1, Phase::kAfter});
    else
      gaps.push_back(Gap{calls[r].first, Phase::kBefore});
  }
  return gaps;
}

namespace {

// The first entry whose time is after t (std::upper_bound over the entries' times).
std::uint32_t boundaryAtTime(const traces::DeviceTrace& trace, std::int64_t t) {
  std::size_t lo = 0, hi = trace.events.size();
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (t < trace.timeOf(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  return static_cast<std::uint32_t>(lo);
}

}  // namespace

namespace {

// 0 for a START of `trace`'s device (or of every device), 1 for an END, -1 for neither.
int annotationStage(const traces::Annotation& a, const traces::DeviceTrace& trace) {
  if (a.device >= 0 && a.device != trace.device) return -1;
  return a.stage == "START" ? 0 : a.stage == "END" ? 1 : -1;
}

Gap annotationGap(const traces::Annotation& a, bool start, const traces::DeviceTrace& trace) {
  return Gap{boundaryAtTime(trace, a.time_us), start ? Phase::kBefore : Phase::kAfter};
}

}  // namespace

std::map<std::string, std::array<std::vector<Gap>, 2>> resolveAnnotationPoints(const traces::Snapshot& snap,
                                                                               std::size_t device_index) {
  const traces::DeviceTrace& trace = snap.devices.at(device_index);
  std::map<std::string, std::array<std::vector<Gap>, 2>> out;
  for (const auto& a : snap.annotations)
    if (const int stage = annotationStage(a, trace); stage >= 0)
      out[a.name][static_cast<std::size_t>(stage)].push_back(annotationGap(a, stage == 0, trace));
  return out;
}

EventStacks eventStacks(const traces::Snapshot& snap, std::size_t device_index) {
  const traces::DeviceTrace& trace = snap.devices.at(device_index);
  EventStacks out;
  out.events = static_cast<std::uint32_t>(trace.events.size());
  for (std::uint32_t i = 0; i < out.events; ++i) {
    const StackId s = snap.callStack(trace.events[i]);
    if (out.runs.empty() || out.runs.back().stack != s) out.runs.push_back({s, i});
  }
  out.runs.shrink_to_fit();
  out.outermost.resize(snap.stack_offsets.empty() ? 0 : snap.stackCount());
  for (std::size_t s = 0; s < out.outermost.size(); ++s) {
    const auto frames = snap.stack(StackId(static_cast<std::uint32_t>(s)));
    out.outermost[s] = frames.empty() ? FrameId{} : frames.back();
  }
  return out;
}

Expected<std::vector<Gap>> resolvePoint(const Point& p, const traces::Snapshot& snap, std::size_t device_index) {
  if (p.kind == Point::Kind::kAfter || p.kind == Point::Kind::kBefore)
    return resolvePoint(p, snap, device_index, eventStacks(snap, device_index));
  return resolvePoint(p, snap, device_index, EventStacks{});
}

Expected<std::vector<Gap>> resolvePoint(const Point& p, const traces::Snapshot& snap, std::size_t device_index,
                                        const EventStacks& stacks) {
  const traces::DeviceTrace& trace = snap.devices.at(device_index);
  std::vector<Gap> gaps;
  switch (p.kind) {
    case Point::Kind::kAfter:
    case Point::Kind::kBefore:
      gaps = gapsOfCalls(p, frameCalls(p, snap, stacks));
      if (gaps.empty()) {
        std::string near;
        for (const auto& n : closestFrameNames(snap, p.frame.text, 6)) near += (near.empty() ? "" : ", ") + n;
        if (p.occurrence)
          return Status::usage(
              fmt::format("point '{}' matches no call #{} (closest frames: {})", p.text, *p.occurrence, near));
        return Status::usage(fmt::format("point '{}' matches no event's stack; closest frames: {}", p.text, near));
      }
      return gaps;
    case Point::Kind::kAnnotationStart:
    case Point::Kind::kAnnotationEnd: {
      const bool start = p.kind == Point::Kind::kAnnotationStart;
      int k = 0;
      for (const auto& a : snap.annotations) {
        if (a.name != p.annotation || annotationStage(a, trace) != (start ? 0 : 1)) continue;
        ++k;
        if (p.occurrence && *p.occurrence != k) continue;
        gaps.push_back(annotationGap(a, start, trace));
      }
      if (gaps.empty()) {
        std::set<std::string> names;
        for (const auto& a : snap.annotations) names.insert(a.name);
        std::vector<std::pair<std::size_t, std::string>> scored;
        for (const auto& n : names) scored.emplace_back(editDistance(p.annotation, n), n);
        std::sort(scored.begin(), scored.end());
        std::string near;
        for (std::size_t i = 0; i < scored.size() && i < 6; ++i) near += (near.empty() ? "" : ", ") + scored[i].second;
        return Status::usage(fmt::format("point '{}' matches no annotation (closest annotations: {})", p.text,
                                         near.empty() ? "none recorded" : near));
      }
      return gaps;
    }
    case Point::Kind::kEvent:
      if (static_cast<std::size_t>(p.value) >= trace.events.size())
        return Status::usage(fmt::format("point '{}': the trace has {} events", p.text, trace.events.size()));
      return std::vector<Gap>{Gap{static_cast<std::uint32_t>(p.value + 1), Phase::kAfter}};
    case Point::Kind::kTime: return std::vector<Gap>{Gap{boundaryAtTime(trace, p.value), Phase::kAfter}};
  }
  return gaps;
}

}  // namespace reservoir::replay
