// The report's curves: step series decimated to min/max per column (report.h).
#include <algorithm>

#include "report/report_internal.h"

namespace reservoir::replay {

__extension__ using UInt128 = unsigned __int128;

std::int64_t CurveAxis::columnBegin(std::size_t c) const {
  if (columns == 0) return begin;
  const auto span = static_cast<UInt128>(end - begin);
  return begin + static_cast<std::int64_t>(span * c / columns);
}

Curve decimateSteps(std::span<const std::int64_t> at, std::span<const std::int64_t> value, std::int64_t start,
                    const CurveAxis& axis) {
  return detail::decimateStepsBy(
      std::min(at.size(), value.size()), [&](std::size_t i) { return at[i]; }, [&](std::size_t i) { return value[i]; },
      start, axis);
}

}  // namespace reservoir::replay
