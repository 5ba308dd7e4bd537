// Level of detail for long series: a min/max pyramid answers "lowest and highest value in
// events [a, b)" in O(fan * levels), so a plot of millions of events costs per pixel
// column, not per event. Values are step functions: the value after event e holds until
// event e + 1.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "geometry/axis.h"
#include "reservoir/core/compact_series.h"
#include "reservoir/replay/program.h"

namespace reservoir::gui {

class MinMaxPyramid {
 public:
  // Level 1 takes the extremes of blocks of kBaseFan values, each level above of kFan blocks of
  // the one below. Level 1 is the pyramid's memory (20 bytes a block): over blocks of 64 it is
  // 0.31 bytes a value, where blocks of 16 were 1.25 (at 20 M events, 46 MB of the GUI's plots);
  // a column's query reads at most 2 x 63 values at its two ends.
  static constexpr std::uint32_t kBaseFan = 64;
  static constexpr std::uint32_t kFan = 16;
  // The blocks that level `level` groups from the level below (level 0: values into level 1).
  [[nodiscard]] static constexpr std::uint32_t fanAbove(std::size_t level) { return level == 0 ? kBaseFan : kFan; }

  MinMaxPyramid() = default;
  explicit MinMaxPyramid(std::span<const std::int64_t> values);
  // Over a compact series (kept by the caller, as the span is).
  explicit MinMaxPyramid(const CompactSeries& values);
  // A step series of `size` events given by its changes: after event e the value is
  // step_values[k] for the last k with step_events[k] <= e (step_events[0] == 0). The pyramid is
  // built over the changes, so it costs per change, not per event.
  MinMaxPyramid(std::span<const std::uint32_t> step_events, std::span<const std::int64_t> step_values,
                std::size_t size);

  struct Range {
    std::int64_t min = 0, max = 0;
    std::uint32_t argmax = 0;  // the first index holding the maximum
    bool valid = false;
  };
  // Over indices [a, b).
  [[nodiscard]] Range query(std::uint32_t a, std::uint32_t b) const;
  [[nodiscard]] std::size_t size() const { return steps_.empty() ? valueCount() : size_; }
  [[nodiscard]] std::int64_t at(std::uint32_t i) const { return steps_.empty() ? value(i) : value(stepOf(i)); }
  [[nodiscard]] std::size_t memoryBytes() const;

 private:
  void build();
  [[nodiscard]] Range queryValues(std::uint32_t a, std::uint32_t b) const;
  [[nodiscard]] std::uint32_t stepOf(std::uint32_t event) const;
  [[nodiscard]] std::int64_t value(std::size_t i) const { return compact_ ? (*compact_)[i] : values_[i]; }
  [[nodiscard]] std::size_t valueCount() const { return compact_ ? compact_->size() : values_.size(); }
  std::span<const std::int64_t> values_;  // per event, or per change of a step series
  const CompactSeries* compact_ = nullptr;  // instead of values_ (per event or op)
  std::span<const std::uint32_t> steps_;  // a step series' change events (empty: values_ is per event)
  std::size_t size_ = 0;                  // a step series' events
  std::vector<std::vector<std::int64_t>> min_, max_;  // level k >= 1: blocks of kBaseFan * kFan^(k-1)
  std::vector<std::vector<std::uint32_t>> argmax_;
};

// One plotted column: the value entering it, the extremes inside it, the value leaving it.
struct ColumnEnvelope {
  std::int64_t min = 0, max = 0, last = 0;
  std::uint32_t argmax = 0;
  bool valid = false;
};

// Columns of a series indexed by event.
std::vector<ColumnEnvelope> envelope(const MinMaxPyramid& series, std::span<const ColumnRange> columns);

// A series indexed by op whose op j takes effect at event op_event[j] (sorted): its value at
// event e is that of the last op at or before e (`before` when there is none).
std::vector<ColumnEnvelope> opEnvelope(const MinMaxPyramid& series, const replay::OpFirstEvents& op_event,
                                       std::span<const ColumnRange> columns, std::int64_t before = 0);
// The same in two steps, to share the op ranges among several series of one trace.
struct OpRange {
  std::uint32_t a = 0, b = 0;  // ops [a, b) in the column; a - 1 is the op entering it
  std::uint32_t last_event = 0;
  bool valid = false;
};
std::vector<OpRange> opRanges(const replay::OpFirstEvents& op_event, std::span<const ColumnRange> columns);
std::vector<ColumnEnvelope> opEnvelope(const MinMaxPyramid& series, const replay::OpFirstEvents& op_event,
                                       std::span<const OpRange> ranges, std::int64_t before = 0);

// The points of a merged curve: per column, a vertical run min..max joined to the next.
struct PolyPoint {
  double x = 0, y = 0;
};
std::vector<PolyPoint> envelopePolyline(std::span<const ColumnEnvelope> cols, const Axis& y, double x0);

// Point markers (annotations, ooms) merged per pixel: one entry per occupied column.
struct MergedMark {
  int column = 0;
  std::uint32_t first = 0;  // index of the first mark in the column
  std::uint32_t count = 0;
};
// `events`: the event of each mark, sorted.
std::vector<MergedMark> mergeMarks(std::span<const std::uint32_t> events, std::span<const ColumnRange> columns);

}  // namespace reservoir::gui
