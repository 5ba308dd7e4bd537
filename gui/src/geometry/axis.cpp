#include "geometry/axis.h"

#include <algorithm>
#include <cmath>

namespace reservoir::gui {

double Axis::toPixel(double d) const {
  const double w = d1 - d0;
  return w == 0.0 ? p0 : p0 + (d - d0) / w * (p1 - p0);
}

double Axis::toDomain(double p) const {
  const double w = p1 - p0;
  return w == 0.0 ? d0 : d0 + (p - p0) / w * (d1 - d0);
}

double Axis::unitsPerPixel() const {
  const double w = std::abs(p1 - p0);
  return w == 0.0 ? 0.0 : (d1 - d0) / w;
}

namespace {

Axis clampDomain(Axis a, double lo, double hi) {
  const double w = std::min(a.d1 - a.d0, hi - lo);
  if (a.d0 < lo) a.d0 = lo;
  if (a.d0 + w > hi) a.d0 = hi - w;
  a.d1 = a.d0 + w;
  return a;
}

}  // namespace

Axis zoomAround(const Axis& axis, double p, double factor, double lo, double hi, double min_width) {
  const double anchor = axis.toDomain(p);
  double w = std::clamp((axis.d1 - axis.d0) * factor, std::min(min_width, hi - lo), hi - lo);
  const double t = (p - axis.p0) / (axis.p1 - axis.p0);
  Axis out = axis;
  out.d0 = anchor - t * w;
  out.d1 = out.d0 + w;
  return clampDomain(out, lo, hi);
}

Axis panBy(const Axis& axis, double dp, double lo, double hi) {
  Axis out = axis;
  const double dd = dp * (axis.d1 - axis.d0) / (axis.p1 - axis.p0);
  out.d0 -= dd;
  out.d1 -= dd;
  return clampDomain(out, lo, hi);
}

std::vector<ColumnRange> eventColumns(const Axis& axis, std::size_t events, int columns) {
  std::vector<ColumnRange> out(static_cast<std::size_t>(std::max(columns, 0)));
  const auto n = static_cast<double>(events);
  for (std::size_t c = 0; c < out.size(); ++c) {
    const double a = std::clamp(axis.toDomain(axis.p0 + static_cast<double>(c)), 0.0, n);
    const double b = std::clamp(axis.toDomain(axis.p0 + static_cast<double>(c) + 1.0), 0.0, n);
    auto first = static_cast<std::uint32_t>(std::ceil(a - 1e-9));
    auto end = static_cast<std::uint32_t>(std::ceil(b - 1e-9));
    // A column narrower than an event shows the event it lies in.
    if (end <= first && a < n) {
      first = static_cast<std::uint32_t>(std::floor(a));
      end = first + 1;
    }
    ColumnRange& r = out[c];
    r.first = first;
    r.end = std::max(first, end);
    r.carry = first > 0 ? first - 1 : ColumnRange::kNone;
  }
  return out;
}

std::vector<ColumnRange> timeColumns(const Axis& axis, std::span<const std::int64_t> time_us, int columns) {
  return timeColumns(
      axis,
      [&](std::int64_t t) {
        return static_cast<std::uint32_t>(std::lower_bound(time_us.begin(), time_us.end(), t) - time_us.begin());
      },
      columns);
}

std::vector<ColumnRange> timeColumns(const Axis& axis, const std::function<std::uint32_t(std::int64_t)>& first_at_or_after,
                                     int columns) {
  std::vector<ColumnRange> out(static_cast<std::size_t>(std::max(columns, 0)));
  auto at = [&](double t) { return first_at_or_after(static_cast<std::int64_t>(std::ceil(t))); };
  std::uint32_t first = at(axis.toDomain(axis.p0));
  for (std::size_t c = 0; c < out.size(); ++c) {
    const std::uint32_t end = at(axis.toDomain(axis.p0 + static_cast<double>(c) + 1.0));
    out[c].first = first;
    out[c].end = std::max(first, end);
    out[c].carry = first > 0 ? first - 1 : ColumnRange::kNone;
    first = out[c].end;
  }
  return out;
}

std::vector<double> niceTicks(double lo, double hi, int max_ticks) {
  std::vector<double> out;
  if (!(hi > lo) || max_ticks < 1) return out;
  const double raw = (hi - lo) / max_ticks;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push_back(v);
  return out;
}

std::vector<double> byteTicks(double lo, double hi, int max_ticks) {
  std::vector<double> out;
  if (!(hi > lo) || max_ticks < 1) return out;
  const double raw = (hi - lo) / max_ticks;
  // Steps of 1, 2, 4, 5 (x 2^10k): e.g. 512 MiB, 1 GiB, 2 GiB, 4 GiB, 5 GiB, 10 GiB.
  double unit = 1.0;
  while (unit * 1024.0 <= raw) unit *= 1024.0;
  double step = unit * 1024.0;
  for (double m : {1.0, 2.0, 4.0, 5.0, 10.0, 20.0, 25.0, 50.0, 100.0, 200.0, 250.0, 500.0})
    if (m * unit >= raw) {
      step = m * unit;
      break;
    }
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push_back(v);
  return out;
}

}  // namespace reservoir::gui
