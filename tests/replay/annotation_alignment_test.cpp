// Aligning two traces on an annotation: synthetic traces whose steps start at different
// event indices; the k-th start of one maps onto the k-th start of the other, linearly
// between starts and offset past the last common one.
#include <gtest/gtest.h>

#include "reservoir/replay/annotation_alignment.h"

namespace reservoir::replay {
namespace {

// `events` events at 10 us apart on device 0, and a START (and END) of `name`#k at the
// time of each event in `starts` (each step also gets an unrelated annotation).
traces::Snapshot stepped(std::uint32_t events, const std::vector<std::uint32_t>& starts, const char* name) {
  traces::Snapshot s;
  traces::DeviceTrace d;
  d.device = 0;
  for (std::uint32_t i = 0; i < events; ++i) {
    traces::TraceEvent e;
    e.action = traces::Action::kAlloc;
    d.push(e, 1000 + 10 * static_cast<std::int64_t>(i));
  }
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const std::int64_t t = 1000 + 10 * static_cast<std::int64_t>(starts[k]) - 5;  // just before the event
    s.annotations.push_back({"START", std::string(name) + std::to_string(k + 1), 0, t});
    s.annotations.push_back({"START", "nccl:all_reduce", 0, t + 1});
    s.annotations.push_back({"END", std::string(name) + std::to_string(k + 1), 0, t + 7});
  }
  s.devices.push_back(std::move(d));
  return s;
}

TEST(AnnotationAlignment, TheKthStepStartMapsOntoTheOthers) {
  const std::vector<std::uint32_t> sa{10, 40, 90, 130}, sb{25, 45, 120};
  const auto a = stepped(200, sa, "ProfilerStep#");
  const auto b = stepped(180, sb, "ProfilerStep#");
  auto al = alignOnAnnotation(a, 0, b, 0, "ProfilerStep#");
  ASSERT_TRUE(al) << al.message();
  EXPECT_EQ(al->starts_a, 4u);
  EXPECT_EQ(al->starts_b, 3u);
  ASSERT_EQ(al->knots.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    SCOPED_TRACE(k);
    EXPECT_DOUBLE_EQ(al->toA(sb[k]), sa[k]);
    EXPECT_DOUBLE_EQ(al->toB(sa[k]), sb[k]);
  }
  // Linear between starts: halfway between B's 1st and 2nd start is halfway between A's.
  EXPECT_DOUBLE_EQ(al->toA(35.0), 25.0);
  EXPECT_DOUBLE_EQ(al->toB(65.0), 82.5);
  // Past the last common start (A's 4th has no partner), offset by the last: 120 -> 90.
  EXPECT_DOUBLE_EQ(al->toA(150.0), 120.0);
  EXPECT_DOUBLE_EQ(al->toB(130.0), 160.0);
  // Before the first, offset by the first.
  EXPECT_DOUBLE_EQ(al->toA(5.0), -10.0);
  // The inverse of the inverse.
  for (double x : {0.0, 17.5, 44.0, 100.0, 170.0}) EXPECT_NEAR(al->toB(al->toA(x)), x, 1e-9);
  // The name without "#" finds the same steps.
  auto bare = alignOnAnnotation(a, 0, b, 0, "ProfilerStep");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->knots, al->knots);
}

TEST(AnnotationAlignment, StartsAreWhereThePointResolvesThem) {
  const auto a = stepped(100, {3, 50}, "train_step#");
  auto starts = annotationStarts(a, 0, "train_step#");
  ASSERT_TRUE(starts) << starts.message();
  EXPECT_EQ(*starts, (std::vector<std::uint32_t>{3, 50}));
  auto missing = annotationStarts(a, 0, "optimizer.step");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("train_step#1"), std::string::npos) << missing.message();
  EXPECT_EQ(alignableAnnotations(a, 0), (std::vector<std::string>{"nccl:all_reduce", "train_step#"}));
}

TEST(AnnotationAlignment, MatchingAndDegenerateStarts) {
  EXPECT_TRUE(annotationMatches("ProfilerStep#12", "ProfilerStep#"));
  EXPECT_TRUE(annotationMatches("ProfilerStep#12", "ProfilerStep"));
  EXPECT_TRUE(annotationMatches("train_step", "train_step"));
  EXPECT_FALSE(annotationMatches("ProfilerStep#12", "Profiler"));
  EXPECT_FALSE(annotationMatches("train_step_2", "train_step"));
  // Starts that do not increase in both traces are skipped; no starts: the identity.
  const std::vector<std::uint32_t> a{5, 5, 9}, b{1, 4, 8};
  const auto al = alignOnStarts(a, b);
  ASSERT_EQ(al.knots.size(), 2u);
  EXPECT_DOUBLE_EQ(al.toA(8.0), 9.0);
  const auto none = alignOnStarts({}, b);
  EXPECT_DOUBLE_EQ(none.toA(7.0), 7.0);
}

}  // namespace
}  // namespace reservoir::replay
