#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "geometry/lod.h"

namespace reservoir::gui {
namespace {

TEST(MinMaxPyramid, MatchesABruteForceScan) {
  std::mt19937 rng(7);
  // Three levels (blocks of 64, 1,024 and 16,384 values) and a partial block at the end.
  std::vector<std::int64_t> v(3 * 16384 + 1000);
  for (auto& x : v) x = static_cast<std::int64_t>(rng() % 100000);
  MinMaxPyramid p(v);
  for (int trial = 0; trial < 500; ++trial) {
    auto a = static_cast<std::uint32_t>(rng() % v.size());
    auto b = static_cast<std::uint32_t>(rng() % (v.size() + 1));
    if (a > b) std::swap(a, b);
    auto r = p.query(a, b);
    if (a == b) {
      EXPECT_FALSE(r.valid);
      continue;
    }
    const auto mx = std::max_element(v.begin() + a, v.begin() + b);
    EXPECT_EQ(r.max, *mx);
    EXPECT_EQ(r.min, *std::min_element(v.begin() + a, v.begin() + b));
    EXPECT_EQ(r.argmax, static_cast<std::uint32_t>(mx - v.begin()));
  }
}

// Its first level groups 64 values: 20 bytes a block, about a third of a byte a value.
TEST(MinMaxPyramid, CostsUnderHalfAByteAValue) {
  std::vector<std::int64_t> v(1 << 20);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int64_t>(i % 977);
  const MinMaxPyramid p(v);
  EXPECT_LT(p.memoryBytes(), v.size() / 2);
  EXPECT_EQ(p.query(0, static_cast<std::uint32_t>(v.size())).max, 976);
}

// Over a compact series (blocks of 64, some kept whole) the pyramid answers as over the plain values.
TEST(MinMaxPyramid, ACompactSeriesAnswersAsItsValues) {
  std::mt19937 rng(11);
  std::vector<std::int64_t> v(5000);
  std::int64_t x = 0;
  for (auto& y : v) y = x += (rng() % 50 == 0 ? (std::int64_t{1} << 33) : 0) + static_cast<std::int64_t>(rng() % 2001) - 1000;
  const CompactSeries c(v);
  MinMaxPyramid plain(v), compact(c);
  ASSERT_EQ(compact.size(), v.size());
  for (int trial = 0; trial < 500; ++trial) {
    auto a = static_cast<std::uint32_t>(rng() % v.size());
    auto b = static_cast<std::uint32_t>(rng() % (v.size() + 1));
    if (a > b) std::swap(a, b);
    const auto r = compact.query(a, b), q = plain.query(a, b);
    ASSERT_EQ(r.valid, q.valid);
    EXPECT_EQ(r.min, q.min);
    EXPECT_EQ(r.max, q.max);
    EXPECT_EQ(r.argmax, q.argmax);
    EXPECT_EQ(compact.at(a), v[a]);
  }
}

// The ops' first events searched as std::lower_bound / upper_bound would, from any known start.
TEST(OpFirstEvents, SearchesAsTheStandardBounds) {
  std::mt19937 rng(5);
  std::vector<std::uint32_t> ev;
  std::uint32_t e = 0;
  for (int i = 0; i < 300; ++i) ev.push_back(e += rng() % 3);  // repeats: several ops at one event
  std::vector<replay::Op> ops(ev.size());
  for (std::size_t j = 0; j < ev.size(); ++j) ops[j].first_event = ev[j];
  for (const replay::OpFirstEvents view : {replay::OpFirstEvents(ev), replay::OpFirstEvents(ops)}) {
    ASSERT_EQ(view.size(), ev.size());
    for (std::uint32_t q = 0; q <= e + 1; ++q) {
      const auto lo = static_cast<std::size_t>(std::lower_bound(ev.begin(), ev.end(), q) - ev.begin());
      const auto hi = static_cast<std::size_t>(std::upper_bound(ev.begin(), ev.end(), q) - ev.begin());
      EXPECT_EQ(view.lowerBound(q), lo);
      EXPECT_EQ(view.upperBound(q), hi);
      EXPECT_EQ(view.lowerBound(q, lo / 2), lo);
      EXPECT_EQ(view.upperBound(q, hi), hi);
    }
  }
}

// A step series given by its changes answers as the same series given per event: values, extremes
// and the first event holding the maximum (a change's event, or the query's start).
TEST(MinMaxPyramid, AStepSeriesAnswersAsItsEventsWould) {
  std::mt19937 rng(11);
  std::vector<std::int64_t> per_event(20000);
  std::vector<std::uint32_t> steps;
  std::vector<std::int64_t> values;
  std::int64_t v = 5;
  for (std::size_t e = 0; e < per_event.size(); ++e) {
    if (e == 0 || rng() % 97 == 0) {
      v = static_cast<std::int64_t>(rng() % 40);  // few levels: ties between changes
      if (values.empty() || values.back() != v) {
        steps.push_back(static_cast<std::uint32_t>(e));
        values.push_back(v);
      }
    }
    per_event[e] = v;
  }
  ASSERT_GT(values.size(), 100u);
  const MinMaxPyramid dense(per_event);
  const MinMaxPyramid sparse(steps, values, per_event.size());
  ASSERT_EQ(sparse.size(), per_event.size());
  for (std::uint32_t e = 0; e < per_event.size(); e += 7) ASSERT_EQ(sparse.at(e), per_event[e]) << e;
  for (int trial = 0; trial < 2000; ++trial) {
    auto a = static_cast<std::uint32_t>(rng() % per_event.size());
    auto b = static_cast<std::uint32_t>(rng() % (per_event.size() + 1));
    if (a > b) std::swap(a, b);
    if (trial % 5 == 0) b = std::min<std::uint32_t>(a + rng() % 3, static_cast<std::uint32_t>(per_event.size()));
    const auto want = dense.query(a, b);
    const auto got = sparse.query(a, b);
    ASSERT_EQ(got.valid, want.valid) << a << ".." << b;
    if (!want.valid) continue;
    ASSERT_EQ(got.min, want.min) << a << ".." << b;
    ASSERT_EQ(got.max, want.max) << a << ".." << b;
    ASSERT_EQ(got.argmax, want.argmax) << a << ".." << b;
  }
  // Columns wider and narrower than an event, some empty with a carried event.
  std::vector<ColumnRange> cols;
  for (std::uint32_t e = 0; e + 300 < per_event.size(); e += 300) cols.push_back({e, e + 300});
  for (std::uint32_t e = 5000; e < 5040; ++e) cols.push_back({e, e + 1});
  cols.push_back({7000, 7000, 6999});
  const auto want = envelope(dense, cols), got = envelope(sparse, cols);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t c = 0; c < want.size(); ++c) {
    EXPECT_EQ(got[c].valid, want[c].valid) << c;
    EXPECT_EQ(got[c].min, want[c].min) << c;
    EXPECT_EQ(got[c].max, want[c].max) << c;
    EXPECT_EQ(got[c].last, want[c].last) << c;
    EXPECT_EQ(got[c].argmax, want[c].argmax) << c;
  }
}

TEST(Envelope, KeepsThePeakAtAnyZoom) {
  std::vector<std::int64_t> v(100000, 1);
  v[54321] = 1000;
  MinMaxPyramid p(v);
  for (int width : {10, 100, 1000}) {
    Axis a{0, 100000, 0, static_cast<double>(width)};
    auto cols = eventColumns(a, v.size(), width);
    auto env = envelope(p, cols);
    std::int64_t top = 0;
    std::uint32_t arg = 0;
    for (const auto& e : env)
      if (e.max > top) {
        top = e.max;
        arg = e.argmax;
      }
    EXPECT_EQ(top, 1000);
    EXPECT_EQ(arg, 54321u);
  }
}

TEST(Envelope, CarriesTheValueIntoEmptyColumns) {
  std::vector<std::int64_t> v{5, 7};
  MinMaxPyramid p(v);
  std::vector<ColumnRange> cols{{0, 1, ColumnRange::kNone}, {1, 1, 0}, {1, 2, 0}};
  auto env = envelope(p, cols);
  EXPECT_EQ(env[1].min, 5);
  EXPECT_EQ(env[1].max, 5);
  EXPECT_EQ(env[2].min, 5);
  EXPECT_EQ(env[2].max, 7);
  EXPECT_EQ(env[2].last, 7);
}

TEST(OpEnvelope, StepsAtTheOpsEvents) {
  std::vector<std::int64_t> per_op{10, 20, 5};
  std::vector<std::uint32_t> op_event{2, 4, 8};
  MinMaxPyramid p(per_op);
  std::vector<ColumnRange> cols{{0, 2, ColumnRange::kNone}, {2, 4, 1}, {4, 8, 3}, {8, 10, 7}};
  auto env = opEnvelope(p, replay::OpFirstEvents(op_event), cols);
  EXPECT_EQ(env[0].max, 0);
  EXPECT_EQ(env[1].max, 10);
  EXPECT_EQ(env[1].min, 0);
  EXPECT_EQ(env[2].max, 20);
  EXPECT_EQ(env[3].min, 5);
  EXPECT_EQ(env[3].max, 20);  // the value entering the column
  EXPECT_EQ(env[3].last, 5);
}

TEST(Polyline, OnePointForFlatColumns) {
  std::vector<ColumnEnvelope> cols(3);
  for (auto& c : cols) c = ColumnEnvelope{4, 4, 4, 0, true};
  cols[1] = ColumnEnvelope{0, 8, 2, 0, true};
  Axis y{0, 8, 8, 0};
  auto pts = envelopePolyline(cols, y, 0);
  EXPECT_EQ(pts.size(), 5u);
}

TEST(MergeMarks, OnePerColumn) {
  std::vector<std::uint32_t> marks{1, 2, 3, 50, 99};
  Axis a{0, 100, 0, 10};
  auto cols = eventColumns(a, 100, 10);
  auto m = mergeMarks(marks, cols);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].count, 3u);
  EXPECT_EQ(m[1].column, 5);
  EXPECT_EQ(m[2].first, 4u);
}

}  // namespace
}  // namespace reservoir::gui
