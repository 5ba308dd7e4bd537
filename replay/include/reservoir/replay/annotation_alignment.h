// Aligning two traces on an annotation: the k-th start of the annotation in one trace is put
// on the k-th start in the other (ranks that drift apart, a fresh run against a resumed one).
// Between two common starts the mapping is linear in events; before the first and past the
// last common start, a trace is offset by that start. The GUI's Compare view draws the second
// trace through it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reservoir/core/status.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::replay {

// A monotone piecewise-linear mapping between the event axes of two traces, A and B
// (positions in events: event e covers [e, e+1)).
struct EventAlignment {
  std::vector<std::pair<double, double>> knots;  // (position in A, position in B), increasing in both
  std::size_t starts_a = 0, starts_b = 0;        // the annotation's starts found in each trace
  // B's position on A's axis, and the inverse. Without knots, the identity.
  [[nodiscard]] double toA(double b) const;
  [[nodiscard]] double toB(double a) const;
};

// The pure rule: the k-th start of A with the k-th start of B, for k up to the fewer of the
// two; a start that does not come strictly after the previous kept one (in both) is skipped.
EventAlignment alignOnStarts(std::span<const std::uint32_t> starts_a, std::span<const std::uint32_t> starts_b);

// Whether annotation `recorded` is an occurrence of `name`: the same name, or `name` with a
// step number ("ProfilerStep#" and "ProfilerStep" both match "ProfilerStep#12").
bool annotationMatches(std::string_view recorded, std::string_view name);

// The event boundaries at which the annotation starts in the trace (as the point
// annotation:NAME:start resolves them), in order; an error naming the closest annotations
// when there are none.
Expected<std::vector<std::uint32_t>> annotationStarts(const traces::Snapshot& snap, std::size_t device_index,
                                                      std::string_view name);

Expected<EventAlignment> alignOnAnnotation(const traces::Snapshot& a, std::size_t device_a, const traces::Snapshot& b,
                                           std::size_t device_b, std::string_view name);

// The annotation names a user can align on, with a step number folded ("ProfilerStep#"),
// started at least twice in the trace, most frequent first.
std::vector<std::string> alignableAnnotations(const traces::Snapshot& snap, std::size_t device_index);

}  // namespace reservoir::replay
