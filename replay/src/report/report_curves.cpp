// The report's curves: step series decimated to min/max per column (report.h).
#include <algorithm>
#include <limits>

#include "reservoir/replay/report.h"

namespace reservoir::replay {

__extension__ using UInt128 = unsigned __int128;

std::int64_t CurveAxis::columnBegin(std::size_t c) const {
  if (columns == 0) return begin;
  const auto span = static_cast<UInt128>(end - begin);
  return begin + static_cast<std::int64_t>(span * c / columns);
}

Curve decimateSteps(std::span<const std::int64_t> at, std::span<const std::int64_t> value, std::int64_t start,
                    const CurveAxis& axis) {
  Curve c;
  c.min.resize(axis.columns);
  c.max.resize(axis.columns);
  const std::size_t n = std::min(at.size(), value.size());
  std::size_t i = 0;
  std::int64_t current = start;
  for (; i < n && at[i] < axis.begin; ++i) current = value[i];  // before the axis: only what it carries in
  for (std::size_t col = 0; col < axis.columns; ++col) {
    const std::int64_t lo = axis.columnBegin(col), hi = axis.columnBegin(col + 1);
    std::int64_t least = std::numeric_limits<std::int64_t>::max(), most = std::numeric_limits<std::int64_t>::min();
    if (i >= n || at[i] > lo) least = most = current;  // the value carried in holds at the column's start
    for (; i < n && at[i] < hi; ++i) {
      current = value[i];
      least = std::min(least, current);
      most = std::max(most, current);
    }
    if (least > most) least = most = current;  // an empty column of zero width (hi == lo)
    c.min[col] = least;
    c.max[col] = most;
  }
  return c;
}

}  // namespace reservoir::replay
