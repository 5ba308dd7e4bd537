#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <set>

#include "reservoir/replay/point.h"
#include "reservoir/replay/report_text.h"
#include "reservoir/traces/reader.h"
#include "test_paths.h"

namespace reservoir::replay {
namespace {

const traces::Snapshot& tiny() {
  static const auto snap = std::make_unique<traces::Snapshot>(
      std::move(*traces::readSnapshotFile((test::samplesDir() / "resume-tiny/resume-main.rank0.pickle").string())));
  return *snap;
}

TEST(Point, ParsesEveryForm) {
  EXPECT_EQ(parsePoint("after:state_dict_loader.py:load")->frame.file, "state_dict_loader.py");
  EXPECT_EQ(parsePoint("after:state_dict_loader.py:load")->frame.name, "load");
  EXPECT_EQ(*parsePoint("after:train.py:212")->frame.line, 212);
  EXPECT_EQ(parsePoint("before:broadcast_weights")->frame.name, "broadcast_weights");
  EXPECT_EQ(*parsePoint("before:train_step#2")->occurrence, 2);
  EXPECT_EQ(parsePoint("annotation:Optimizer.step#AdamW.step:end")->annotation, "Optimizer.step#AdamW.step");
  EXPECT_EQ(parsePoint("event:41")->value, 41);
  EXPECT_EQ(parsePoint("time:1796028451260880")->kind, Point::Kind::kTime);
  EXPECT_FALSE(parsePoint("somewhere").ok());
  EXPECT_FALSE(parsePoint("after:").ok());
  EXPECT_FALSE(parsePoint("before:x#0").ok());
  EXPECT_FALSE(parsePoint("annotation:foo:middle").ok());
  EXPECT_FALSE(parsePoint("event:-3").ok());
}

// Reports describe a point's run number only when it is one ("#digits"), as parsePoint reads it:
// a '#' inside a name is part of the name.
TEST(Point, DescriptionsReadTheRunNumberAsParsePointDoes) {
  EXPECT_EQ(describePoint("after:train.py:step#2"), "after train.py:step (run 2)");
  EXPECT_EQ(describePoint("before:train.py:step"), "before train.py:step");
  EXPECT_EQ(describePoint("after:gen.py:<lambda>#main"), "after gen.py:<lambda>#main");
  EXPECT_EQ(describePoint("annotation:phase#a:end#3"), "at the end of phase#a (run 3)");
  EXPECT_EQ(describePoint("annotation:phase#a:start"), "at the start of phase#a");
  EXPECT_EQ(describePoint("event:12"), "after event 12");
}

TEST(Point, FileMatchesAtAPathBoundary) {
  traces::Snapshot snap;
  traces::Frame f{snap.strings.intern("/venv/torch/distributed/checkpoint/state_dict_loader.py"),
                  snap.strings.intern("load"),
                  183,
                  {}};
  EXPECT_TRUE(parseFrameSpec("state_dict_loader.py:load")->matches(snap, f));
  EXPECT_TRUE(parseFrameSpec("checkpoint/state_dict_loader.py:load")->matches(snap, f));
  EXPECT_FALSE(parseFrameSpec("dict_loader.py:load")->matches(snap, f));
  EXPECT_TRUE(parseFrameSpec("state_dict_loader.py:183")->matches(snap, f));
  EXPECT_FALSE(parseFrameSpec("state_dict_loader.py:184")->matches(snap, f));
}

TEST(Point, AfterAndBeforeOfTheLoadAndTheBroadcastShareAGap) {
  auto after = resolvePoint(*parsePoint("after:state_dict_loader.py:load"), tiny(), 0);
  auto before = resolvePoint(*parsePoint("before:broadcast_weights"), tiny(), 0);
  ASSERT_TRUE(after.ok() && before.ok());
  ASSERT_EQ(after->size(), 1u);
  EXPECT_EQ((*after)[0].boundary, (*before)[0].boundary);
  EXPECT_LT((*after)[0].phase, (*before)[0].phase);
}

// Every event's call stack, from its run in the index.
std::vector<StackId> perEvent(const EventStacks& stacks) {
  std::vector<StackId> out;
  for (std::size_t r = 0; r < stacks.runs.size(); ++r) out.resize(stacks.lastOf(r) + 1, stacks.runs[r].stack);
  return out;
}

// The calls of `p`'s function as the definition reads, one event at a time (frameCalls takes a
// run of events with one stack at once).
std::vector<FrameCall> callsEventByEvent(const Point& p, const traces::Snapshot& snap, std::size_t device) {
  StackMatcher matcher(snap, p.frame);
  std::vector<FrameCall> calls;
  bool in_call = false;
  FrameId root_of_call;
  auto outermost = [&](StackId s) {
    const auto frames = snap.stack(s);
    return frames.empty() ? FrameId{} : frames.back();
  };
  const auto& events = snap.devices[device].events;
  for (std::uint32_t i = 0; i < events.size(); ++i) {
    const StackId s = snap.callStack(events[i]);
    if (matcher.matches(s)) {
      if (!in_call) {
        calls.push_back({i, i});
        root_of_call = outermost(s);
      }
      calls.back().last = i;
      in_call = true;
    } else if (outermost(s).valid() && outermost(s) == root_of_call) {
      in_call = false;  // the calling thread went on outside the function
    }
  }
  return calls;
}

// The index holds each event's call stack as runs of equal stacks, and the calls found per run
// are the calls found per event: on every real trace here, for every function in it.
TEST(Point, CallsFoundPerRunOfStacksAreTheCallsFoundPerEvent) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(test::testDataDir() / "traces"))
    if (e.path().filename().string().starts_with("real-") && e.path().string().ends_with(".pickle.zst"))
      files.push_back(e.path());
  files.push_back(test::samplesDir() / "resume-tiny/resume-main.rank0.pickle");
  std::size_t functions = 0, runs = 0, events = 0;
  for (const auto& f : files) {
    auto snap = traces::readSnapshotFile(f.string());
    ASSERT_TRUE(snap.ok()) << f << ": " << snap.message();
    const std::size_t d = snap->busiestDevice();
    const EventStacks stacks = eventStacks(*snap, d);
    const auto& ev = snap->devices[d].events;
    ASSERT_EQ(stacks.events, ev.size()) << f;
    const std::vector<StackId> each = perEvent(stacks);
    ASSERT_EQ(each.size(), ev.size()) << f;
    for (std::size_t i = 0; i < ev.size(); ++i) ASSERT_EQ(each[i], snap->callStack(ev[i])) << f << " event " << i;
    for (std::size_t r = 1; r < stacks.runs.size(); ++r) ASSERT_NE(stacks.runs[r].stack, stacks.runs[r - 1].stack) << f;
    runs += stacks.runs.size();
    events += ev.size();
    std::set<std::string> names;
    for (const auto& fr : snap->frames) names.insert(std::string(snap->strings.view(fr.name)));
    for (const auto& name : names) {
      const auto point = parsePoint("after:" + name);
      if (!point) continue;
      const auto want = callsEventByEvent(*point, *snap, d);
      const auto got = frameCalls(*point, *snap, stacks);
      ASSERT_EQ(got.size(), want.size()) << f << " " << name;
      for (std::size_t k = 0; k < got.size(); ++k) {
        ASSERT_EQ(got[k].first, want[k].first) << f << " " << name << " call " << k;
        ASSERT_EQ(got[k].last, want[k].last) << f << " " << name << " call " << k;
      }
      ++functions;
    }
  }
  EXPECT_GT(functions, 100u);
  EXPECT_LT(runs * 2, events) << "a training trace repeats a stack over consecutive events";
}

// A sweep resolves its hundred points with one EventStacks: each gives the gaps it gives alone.
TEST(Point, OneEventStacksServesEveryPoint) {
  const auto& snap = tiny();
  const EventStacks stacks = eventStacks(snap, 0);
  std::size_t points = 0;
  for (const auto& f : snap.frames) {
    const std::string name(snap.strings.view(f.name));
    if (name.empty() || name.find_first_of(":#@ ") != std::string::npos) continue;
    for (const char* kind : {"after:", "before:"}) {
      const auto point = parsePoint(kind + name);
      if (!point) continue;
      const auto alone = resolvePoint(*point, snap, 0);
      const auto shared = resolvePoint(*point, snap, 0, stacks);
      ASSERT_EQ(alone.ok(), shared.ok()) << point->text;
      if (alone.ok()) {
        EXPECT_EQ(*alone, *shared) << point->text;
      }
      ++points;
    }
  }
  EXPECT_GT(points, 20u);
}

TEST(Point, NoMatchListsTheClosestFrames) {
  auto r = resolvePoint(*parsePoint("after:broadcast_weight"), tiny(), 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("closest frames"), std::string::npos);
  EXPECT_NE(r.message().find("broadcast_weights"), std::string::npos);
}

TEST(Point, EventAndTime) {
  auto e = resolvePoint(*parsePoint("event:10"), tiny(), 0);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ((*e)[0].boundary, 11u);
  EXPECT_FALSE(resolvePoint(*parsePoint("event:99999"), tiny(), 0).ok());
  const auto t = tiny().devices[0].timeOf(20);
  auto g = resolvePoint(*parsePoint("time:" + std::to_string(t)), tiny(), 0);
  ASSERT_TRUE(g.ok());
  EXPECT_GT((*g)[0].boundary, 20u);
}

TEST(Point, AnnotationsArePlacedByTime) {
  auto r = resolvePoint(*parsePoint("annotation:Optimizer.step#AdamW.step:start"), tiny(), 0);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_FALSE(r->empty());
  auto bad = resolvePoint(*parsePoint("annotation:Optimizer.stp#AdamW.step:start"), tiny(), 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("Optimizer.step"), std::string::npos);
}

// The sweep resolves every annotation point in one pass (40,000 names one by one took 20 s): the
// same gaps as resolvePoint gives each, for every recorded name and both stages.
TEST(Point, AllAnnotationPointsAtOnceAreTheOnesResolvedOneByOne) {
  const auto all = resolveAnnotationPoints(tiny(), 0);
  ASSERT_GT(all.size(), 3u);
  std::size_t gaps = 0;
  for (const auto& [name, stages] : all)
    for (std::size_t s = 0; s < 2; ++s) {
      auto one = resolvePoint(*parsePoint("annotation:" + name + (s == 0 ? ":start" : ":end")), tiny(), 0);
      if (stages[s].empty()) {
        EXPECT_FALSE(one.ok()) << name;
        continue;
      }
      ASSERT_TRUE(one.ok()) << name << ": " << one.message();
      EXPECT_EQ(*one, stages[s]) << name;
      gaps += stages[s].size();
    }
  EXPECT_GT(gaps, 100u);  // the sample's 160 annotations
}

}  // namespace
}  // namespace reservoir::replay
