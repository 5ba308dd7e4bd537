// Points in a trace where what-if edits happen, in the syntax users write on the command
// line: after:SPEC, before:SPEC (SPEC = NAME | FILE:NAME | FILE:LINE, optionally #k),
// annotation:NAME:start|end, event:N, time:US.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reservoir/core/status.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::replay {

// A frame selector: NAME, FILE:NAME or FILE:LINE; FILE matches the end of the frame's
// filename at a path boundary ("state_dict_loader.py" matches ".../checkpoint/state_dict_loader.py").
struct FrameSpec {
  std::string file;
  std::string name;
  std::optional<std::int64_t> line;
  std::string text;

  [[nodiscard]] bool matches(const traces::Snapshot& snap, const traces::Frame& frame) const;
};

Expected<FrameSpec> parseFrameSpec(std::string_view text);

// Which stacks contain a frame matching `spec` (cached per stack id).
class StackMatcher {
 public:
  StackMatcher(const traces::Snapshot& snap, FrameSpec spec);
  // Whether any frame of `stack` matches; decided once per stack (inline: a sweep asks it for
  // every event of the trace, per function).
  [[nodiscard]] bool matches(StackId stack) {
    if (!stack.valid() || stack.value() >= stack_match_.size()) return false;
    const std::int8_t cached = stack_match_[stack.value()];
    return cached >= 0 ? cached != 0 : decide(stack);
  }
  [[nodiscard]] const FrameSpec& spec() const { return spec_; }

 private:
  bool decide(StackId stack);
  const traces::Snapshot& snap_;
  FrameSpec spec_;
  std::vector<std::int8_t> frame_match_;  // -1 unknown, 0 no, 1 yes
  std::vector<std::int8_t> stack_match_;
};

struct Point {
  enum class Kind : std::uint8_t { kAfter, kBefore, kAnnotationStart, kAnnotationEnd, kEvent, kTime };
  Kind kind = Kind::kAfter;
  FrameSpec frame;                // after / before
  std::string annotation;         // annotation
  std::optional<int> occurrence;  // #k (1-based)
  std::int64_t value = 0;         // event index / time_us
  std::string text;               // as written
};

Expected<Point> parsePoint(std::string_view text);

// Where a name's run number starts: the '#' of a "#digits" suffix ("train_step#2",
// "ProfilerStep#12"), or npos when there is none (a '#' inside a name is part of it). Points
// (#k), the step count's annotation families and the annotation alignment all read it this way.
std::size_t occurrenceSuffix(std::string_view name);

// Several edits can fall into the same gap between two events: first what is placed after
// the run that ends there, then what is placed before the run that starts there.
enum class Phase : std::uint8_t { kAfter = 0, kBefore = 1 };

struct Gap {
  std::uint32_t boundary = 0;  // between events boundary-1 and boundary
  Phase phase = Phase::kAfter;
  auto operator<=>(const Gap&) const = default;
};

// What resolving a frame point (after:/before:) reads of every event of one device: each
// event's call stack (Snapshot::callStack) and each stack's outermost frame. Made once for many
// points (a sweep resolves a hundred or more, each a pass over the trace).
// The events' call stacks as runs of consecutive events with the same stack (a training trace
// has about one run per four events; a function's calls are found per run, not per event).
struct EventStacks {
  struct Run {
    StackId stack;
    std::uint32_t first = 0;  // its first event; it lasts up to the next run's first (or `events`)
  };
  std::vector<Run> runs;
  std::uint32_t events = 0;
  std::vector<FrameId> outermost;  // per stack id (an invalid id reads as stack 0, as Snapshot::stack does)
  [[nodiscard]] std::uint32_t lastOf(std::size_t run) const {
    return (run + 1 < runs.size() ? runs[run + 1].first : events) - 1;
  }
};
EventStacks eventStacks(const traces::Snapshot& snap, std::size_t device_index);

// Every gap `point` names in device `device_index`; an error (with the closest frame names)
// when it names none.
Expected<std::vector<Gap>> resolvePoint(const Point& point, const traces::Snapshot& snap, std::size_t device_index);
// The same with `stacks` (eventStacks of the same snapshot and device) for a frame point.
Expected<std::vector<Gap>> resolvePoint(const Point& point, const traces::Snapshot& snap, std::size_t device_index,
                                        const EventStacks& stacks);

// The calls of the function a frame point (after:/before:) names: each run of events whose
// stacks hold its frame, as [first event, last event]. What resolvePoint reads them from; the
// points of one function (after:, before:, each #k) differ only in which gaps they take of its
// calls, so a sweep finds the calls once per function.
struct FrameCall {
  std::uint32_t first = 0;
  std::uint32_t last = 0;
};
std::vector<FrameCall> frameCalls(const Point& point, const traces::Snapshot& snap, const EventStacks& stacks);
// The gaps a frame point takes of its function's calls (its kind and #k choose): resolvePoint's
// answer when not empty.
std::vector<Gap> gapsOfCalls(const Point& point, const std::vector<FrameCall>& calls);

// The gaps of every annotation point at once, by name: [0] for annotation:NAME:start, [1] for
// annotation:NAME:end, as resolvePoint gives each (one pass; resolving tens of thousands of names
// one by one, as a sweep's candidates did, was quadratic).
std::map<std::string, std::array<std::vector<Gap>, 2>> resolveAnnotationPoints(const traces::Snapshot& snap,
                                                                               std::size_t device_index);

// Frame names closest to `query` (for "did you mean").
std::vector<std::string> closestFrameNames(const traces::Snapshot& snap, std::string_view query, std::size_t count);

}  // namespace reservoir::replay
