// Linear mappings between a domain (events, microseconds, bytes) and pixels, and the
// columns of a plot: which events each pixel column covers, in event or in time mode.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace reservoir::gui {

struct Axis {
  double d0 = 0.0, d1 = 1.0;  // domain range
  double p0 = 0.0, p1 = 1.0;  // pixel range (p1 < p0 for a y axis pointing up)

  [[nodiscard]] double toPixel(double d) const;
  [[nodiscard]] double toDomain(double p) const;
  [[nodiscard]] double unitsPerPixel() const;
};

// Zooms `axis`'s domain by `factor` (< 1: in) keeping the domain point under pixel `p` fixed,
// clamped to [lo, hi] and to a width of at least `min_width`.
Axis zoomAround(const Axis& axis, double p, double factor, double lo, double hi, double min_width);
// Pans by `dp` pixels, clamped to [lo, hi].
Axis panBy(const Axis& axis, double dp, double lo, double hi);

// Events covered by one pixel column: [first, end); `carry` is the last event before it
// (kNone when there is none), whose value holds on entering the column.
struct ColumnRange {
  static constexpr std::uint32_t kNone = 0xffffffffu;
  std::uint32_t first = 0, end = 0;
  std::uint32_t carry = kNone;
  [[nodiscard]] bool empty() const { return first >= end; }
  // The event whose state the column shows when it has no event of its own.
  [[nodiscard]] std::uint32_t last() const { return empty() ? carry : end - 1; }
};

// Columns of `axis` (one per pixel from p0 to p1) over `events` events; event e occupies
// the domain [e, e+1).
std::vector<ColumnRange> eventColumns(const Axis& axis, std::size_t events, int columns);
// The same with the domain in microseconds; `time_us` is nondecreasing, one per event.
std::vector<ColumnRange> timeColumns(const Axis& axis, std::span<const std::int64_t> time_us, int columns);
// The same over times held another way: `first_at_or_after(t)` is the first event whose time is >= t.
std::vector<ColumnRange> timeColumns(const Axis& axis, const std::function<std::uint32_t(std::int64_t)>& first_at_or_after,
                                     int columns);

// "Nice" tick positions (1, 2, 5 x 10^k, or powers of two for bytes) covering [lo, hi].
std::vector<double> niceTicks(double lo, double hi, int max_ticks);
std::vector<double> byteTicks(double lo, double hi, int max_ticks);

}  // namespace reservoir::gui
