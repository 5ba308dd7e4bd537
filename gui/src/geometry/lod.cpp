#include "geometry/lod.h"

#include <algorithm>

namespace reservoir::gui {

MinMaxPyramid::MinMaxPyramid(std::span<const std::int64_t> values) : values_(values) { build(); }

MinMaxPyramid::MinMaxPyramid(const CompactSeries& values) : compact_(&values) { build(); }

MinMaxPyramid::MinMaxPyramid(std::span<const std::uint32_t> step_events, std::span<const std::int64_t> step_values,
                             std::size_t size)
    : values_(step_values), steps_(step_events), size_(size) {
  if (steps_.empty()) values_ = {};  // no changes: an empty series
  build();
}

std::uint32_t MinMaxPyramid::stepOf(std::uint32_t event) const {
  return static_cast<std::uint32_t>(std::upper_bound(steps_.begin(), steps_.end(), event) - steps_.begin()) - 1;
}

void MinMaxPyramid::build() {
  // Level 1 from the values (plain or compact), each level above from the one below.
  std::size_t n = valueCount();
  std::vector<std::uint32_t> prev_arg;
  for (std::uint32_t fan = fanAbove(0); n > fan; fan = fanAbove(min_.size())) {
    const std::size_t m = (n + fan - 1) / fan;
    std::vector<std::int64_t> mn(m), mx(m);
    std::vector<std::uint32_t> ag(m);
    const bool first = min_.empty();
    const std::int64_t* lo = first ? nullptr : min_.back().data();
    const std::int64_t* hi = first ? nullptr : max_.back().data();
    for (std::size_t i = 0; i < m; ++i) {
      const std::size_t a = i * fan, b = std::min(n, a + fan);
      mn[i] = first ? value(a) : lo[a];
      mx[i] = first ? mn[i] : hi[a];
      ag[i] = first ? static_cast<std::uint32_t>(a) : prev_arg[a];
      for (std::size_t k = a + 1; k < b; ++k) {
        const std::int64_t l = first ? value(k) : lo[k];
        const std::int64_t h = first ? l : hi[k];
        mn[i] = std::min(mn[i], l);
        if (h > mx[i]) {
          mx[i] = h;
          ag[i] = first ? static_cast<std::uint32_t>(k) : prev_arg[k];
        }
      }
    }
    min_.push_back(std::move(mn));
    max_.push_back(std::move(mx));
    argmax_.push_back(std::move(ag));
    prev_arg = argmax_.back();
    n = m;
  }
}

std::size_t MinMaxPyramid::memoryBytes() const {
  std::size_t b = 0;
  for (std::size_t k = 0; k < min_.size(); ++k) b += min_[k].size() * (8 + 8 + 4);
  return b;
}

MinMaxPyramid::Range MinMaxPyramid::query(std::uint32_t a, std::uint32_t b) const {
  if (steps_.empty()) return queryValues(a, b);
  b = std::min<std::uint32_t>(b, static_cast<std::uint32_t>(size_));
  if (a >= b) return {};
  // The changes in effect over [a, b): the one entering a through the last one before b. The first
  // event holding the maximum is its change's event, or `a` for the change entering a.
  Range r = queryValues(stepOf(a), stepOf(b - 1) + 1);
  r.argmax = std::max(a, steps_[r.argmax]);
  return r;
}

MinMaxPyramid::Range MinMaxPyramid::queryValues(std::uint32_t a, std::uint32_t b) const {
  Range r;
  b = std::min<std::uint32_t>(b, static_cast<std::uint32_t>(valueCount()));
  if (a >= b) return r;
  std::int64_t mn = value(a), mx = value(a);
  std::uint32_t arg = a;
  // Level 0: raw values; above: block minima, maxima and the index of each block's maximum.
  auto raw = [&](std::uint32_t i) {
    const std::int64_t v = value(i);
    mn = v < mn ? v : mn;
    if (v > mx || (v == mx && i < arg)) {
      mx = v;
      arg = i;
    }
  };
  const std::int64_t* lo = nullptr;
  const std::int64_t* hi = nullptr;
  const std::uint32_t* ag = nullptr;
  auto block = [&](std::uint32_t i) {
    mn = lo[i] < mn ? lo[i] : mn;
    if (hi[i] > mx || (hi[i] == mx && ag[i] < arg)) {
      mx = hi[i];
      arg = ag[i];
    }
  };
  std::size_t level = 0;
  while (a < b) {
    const std::uint32_t fan = fanAbove(level);
    const bool climb = level < min_.size() && b - a >= 2 * fan;
    if (level == 0) {
      if (!climb) {
        for (; a < b; ++a) raw(a);
        break;
      }
      for (; a % fan != 0; ++a) raw(a);
      for (; b % fan != 0; --b) raw(b - 1);
    } else {
      lo = min_[level - 1].data();
      hi = max_[level - 1].data();
      ag = argmax_[level - 1].data();
      if (!climb) {
        for (; a < b; ++a) block(a);
        break;
      }
      for (; a % fan != 0; ++a) block(a);
      for (; b % fan != 0; --b) block(b - 1);
    }
    a /= fan;
    b /= fan;
    ++level;
  }
  r.min = mn;
  r.max = mx;
  r.argmax = arg;
  r.valid = true;
  return r;
}

namespace {

ColumnEnvelope fromRange(const MinMaxPyramid::Range& r, std::int64_t entering, bool has_entering, std::int64_t last) {
  ColumnEnvelope c;
  c.valid = true;
  c.min = r.valid ? r.min : entering;
  c.max = r.valid ? r.max : entering;
  c.argmax = r.argmax;
  if (has_entering) {
    c.min = std::min(c.min, entering);
    if (entering > c.max || !r.valid) c.max = std::max(c.max, entering);
  }
  c.last = last;
  return c;
}

}  // namespace

std::vector<ColumnEnvelope> envelope(const MinMaxPyramid& s, std::span<const ColumnRange> columns) {
  std::vector<ColumnEnvelope> out(columns.size());
  const auto n = static_cast<std::uint32_t>(s.size());
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const ColumnRange& col = columns[c];
    const std::uint32_t end = std::min(col.end, n);
    const bool has_carry = col.carry != ColumnRange::kNone && col.carry < n;
    if (col.first >= end && !has_carry) continue;
    const auto r = s.query(std::min(col.first, end), end);
    const std::int64_t entering = has_carry ? s.at(col.carry) : 0;
    out[c] = fromRange(r, entering, has_carry, r.valid ? s.at(end - 1) : entering);
    if (!r.valid) out[c].argmax = col.carry;
  }
  return out;
}

std::vector<OpRange> opRanges(const replay::OpFirstEvents& op_event, std::span<const ColumnRange> columns) {
  std::vector<OpRange> out(columns.size());
  replay::OpBoundaryCursor cursor(op_event);
  auto opsBefore = [&](std::uint32_t e) { return cursor.at(e); };  // ops with first event < e
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const ColumnRange& col = columns[c];
    if (col.empty() && col.carry == ColumnRange::kNone) continue;
    OpRange& r = out[c];
    r.a = opsBefore(col.empty() ? col.carry + 1 : col.first);
    r.b = col.empty() ? r.a : opsBefore(col.end);
    r.last_event = col.last();
    r.valid = true;
  }
  return out;
}

std::vector<ColumnEnvelope> opEnvelope(const MinMaxPyramid& s, const replay::OpFirstEvents& op_event,
                                       std::span<const OpRange> ranges, std::int64_t before) {
  std::vector<ColumnEnvelope> out(ranges.size());
  for (std::size_t c = 0; c < ranges.size(); ++c) {
    const OpRange& o = ranges[c];
    if (!o.valid) continue;
    const std::int64_t entering = o.a > 0 && o.a <= s.size() ? s.at(o.a - 1) : before;
    const auto r = s.query(o.a, o.b);
    out[c] = fromRange(r, entering, true, r.valid ? s.at(o.b - 1) : entering);
    out[c].argmax = r.valid ? op_event[r.argmax] : o.last_event;
  }
  return out;
}

std::vector<ColumnEnvelope> opEnvelope(const MinMaxPyramid& s, const replay::OpFirstEvents& op_event,
                                       std::span<const ColumnRange> columns, std::int64_t before) {
  const auto ranges = opRanges(op_event, columns);
  return opEnvelope(s, op_event, ranges, before);
}

std::vector<PolyPoint> envelopePolyline(std::span<const ColumnEnvelope> cols, const Axis& y, double x0) {
  std::vector<PolyPoint> pts;
  pts.reserve(cols.size() * 3);
  for (std::size_t c = 0; c < cols.size(); ++c) {
    const auto& e = cols[c];
    if (!e.valid) continue;
    const double x = x0 + static_cast<double>(c) + 0.5;
    const double ymin = y.toPixel(static_cast<double>(e.min)), ymax = y.toPixel(static_cast<double>(e.max));
    const double ylast = y.toPixel(static_cast<double>(e.last));
    if (e.min == e.max) {
      pts.push_back({x, ylast});
      continue;
    }
    // Enter at the extreme nearest the previous point, leave at the value leaving the column.
    const bool from_low = !pts.empty() && std::abs(pts.back().y - ymin) < std::abs(pts.back().y - ymax);
    pts.push_back({x, from_low ? ymin : ymax});
    pts.push_back({x, from_low ? ymax : ymin});
    pts.push_back({x, ylast});
  }
  return pts;
}

std::vector<MergedMark> mergeMarks(std::span<const std::uint32_t> events, std::span<const ColumnRange> columns) {
  std::vector<MergedMark> out;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (columns[c].empty()) continue;
    const auto lo = std::lower_bound(events.begin(), events.end(), columns[c].first);
    const auto hi = std::lower_bound(lo, events.end(), columns[c].end);
    if (lo == hi) continue;
    out.push_back(MergedMark{static_cast<int>(c), static_cast<std::uint32_t>(lo - events.begin()),
                             static_cast<std::uint32_t>(hi - lo)});
  }
  return out;
}

}  // namespace reservoir::gui
