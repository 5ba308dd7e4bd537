// The one loaded-trace type: files and bytes read alike, capture facts found beside the file,
// a prepared trace keeps its snapshot alive, the recorded-reserved walk, and the library's JSON.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "reservoir/replay/report_json.h"
#include "reservoir/replay/trace.h"
#include "reservoir/replay/whatif.h"
#include "reservoir/traces/recorded_reserved.h"
#include "test_paths.h"

namespace reservoir::replay {
namespace {

std::string resumeMain(int rank = 0) {
  return (test::samplesDir() / ("resume-tiny/resume-main.rank" + std::to_string(rank) + ".pickle")).string();
}

std::vector<std::uint8_t> fileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(Trace, FileAndBytesReadTheSameSnapshot) {
  auto file = readTrace(resumeMain());
  ASSERT_TRUE(file) << file.message();
  ASSERT_NE(file->capture, nullptr);  // resume-main.rank0.json is beside it
  const auto bytes = fileBytes(resumeMain());
  auto mem = readTraceBytes(bytes, "in memory");
  ASSERT_TRUE(mem) << mem.message();
  EXPECT_EQ(mem->capture, nullptr);
  EXPECT_EQ(mem->path, "in memory");
  ASSERT_EQ(mem->snap().devices.size(), file->snap().devices.size());
  const auto d = file->snap().busiestDevice();
  EXPECT_EQ(mem->snap().devices[d].events.size(), file->snap().devices[d].events.size());
  EXPECT_EQ(mem->snap().segments.size(), file->snap().segments.size());
}

TEST(Trace, BadBytesNameTheSourceAndOffset) {
  const std::vector<std::uint8_t> junk{'h', 'e', 'l', 'l', 'o'};
  auto t = readTraceBytes(junk, "junk.bin");
  ASSERT_FALSE(t);
  EXPECT_NE(t.message().find("junk.bin"), std::string::npos) << t.message();
  EXPECT_EQ(t.message().rfind(
                "not a PyTorch memory snapshot: the file starts with text (\"hello\") (file junk.bin, byte 0: ", 0),
            0u)
      << t.message();
}

TEST(Trace, CaptureJsonCanBeIgnored) {
  TraceReadOptions o;
  o.use_capture_json = false;
  auto t = readTrace(resumeMain(), o);
  ASSERT_TRUE(t) << t.message();
  EXPECT_EQ(t->capture, nullptr);
  EXPECT_EQ(t->environment().capture, nullptr);
}

TEST(Trace, APreparedTraceKeepsItsSnapshotAlive) {
  std::optional<PreparedTrace> prepared;
  std::int64_t expected_peak = 0;
  {
    auto t = readTrace(resumeMain());
    ASSERT_TRUE(t) << t.message();
    auto p = prepareTrace(t->snapshot, t->snap().busiestDevice(), t->environment());
    ASSERT_TRUE(p) << p.message();
    prepared = std::move(*p);
    expected_peak = prepared->recorded_peak_reserved;
    EXPECT_EQ(t->snapshot.use_count(), 2);
  }  // the trace is gone; the prepared trace holds the only reference
  EXPECT_EQ(prepared->snapshot.use_count(), 1);
  WhatIfOptions w;
  w.edits.push_back(*parseCleanup("after:state_dict_loader.py:load"));
  auto rep = runWhatIfOn(*prepared, w);
  ASSERT_TRUE(rep) << rep.message();
  EXPECT_EQ(rep->baseline.peak_reserved.bytes, expected_peak);
}

TEST(Trace, ChooseDeviceByCudaNumber) {
  auto t = readTrace(resumeMain());
  ASSERT_TRUE(t) << t.message();
  const auto& snap = t->snap();
  auto busiest = chooseDevice(snap, std::nullopt);
  ASSERT_TRUE(busiest);
  EXPECT_EQ(*busiest, snap.busiestDevice());
  auto same = chooseDevice(snap, snap.devices[*busiest].device);
  ASSERT_TRUE(same);
  EXPECT_EQ(*same, *busiest);
  auto none = chooseDevice(snap, 4242);
  ASSERT_FALSE(none);
  EXPECT_NE(none.message().find("no device 4242"), std::string::npos) << none.message();
}

traces::TraceEvent event(traces::Action a, std::uint64_t size, std::uint64_t addr = 0) {
  traces::TraceEvent e;
  e.action = a;
  e.size = size;
  e.addr = addr;
  return e;
}

TEST(RecordedReserved, PeakAndCapacityFromOoms) {
  using traces::Action;
  traces::DeviceTrace d;
  d.events = {event(Action::kSegmentAlloc, 100), event(Action::kAlloc, 60),        event(Action::kSegmentMap, 50),
              event(Action::kOom, 0, 1000),      event(Action::kSegmentUnmap, 50), event(Action::kSegmentFree, 100),
              event(Action::kOom, 0, 900)};
  const auto w = traces::walkRecordedReserved(d, 20);
  EXPECT_EQ(w.peak, 170);
  ASSERT_TRUE(w.peak_event);
  EXPECT_EQ(*w.peak_event, 2u);
  ASSERT_TRUE(w.capacity_from_ooms);
  EXPECT_EQ(*w.capacity_from_ooms, 920u);  // min(1000 + 170, 900 + 20)
  EXPECT_EQ(traces::reservedChange(d.events[4]), -50);
  EXPECT_EQ(traces::reservedChange(d.events[1]), 0);
  const auto empty = traces::walkRecordedReserved(traces::DeviceTrace{}, 7);
  EXPECT_EQ(empty.peak, 7);
  EXPECT_FALSE(empty.peak_event);
}

TEST(ReportJson, SeveralRanksCarryTheirMaximum) {
  WhatIfOptions w;
  w.edits.push_back(*parseCleanup("after:state_dict_loader.py:load"));
  std::vector<RankWhatIf> ranks;
  for (int rank : {0, 1}) {
    auto t = readTrace(resumeMain(rank));
    ASSERT_TRUE(t) << t.message();
    auto rep = runWhatIf(t->snapshot, t->snap().busiestDevice(), t->environment(), w);
    ASSERT_TRUE(rep) << rep.message();
    ranks.push_back({std::move(*t), std::move(*rep)});
  }
  const auto j = whatIfJson(ranks);
  ASSERT_EQ(j["traces"].size(), 2u);
  const std::int64_t b0 = j["traces"][0]["baseline"]["peak_reserved"], b1 = j["traces"][1]["baseline"]["peak_reserved"];
  const std::int64_t w0 = j["traces"][0]["whatif"]["peak_reserved"], w1 = j["traces"][1]["whatif"]["peak_reserved"];
  EXPECT_EQ(j["max_over_traces"]["baseline_peak_reserved"], std::max(b0, b1));
  EXPECT_EQ(j["max_over_traces"]["whatif_peak_reserved"], std::max(w0, w1));
  EXPECT_EQ(j["traces"][1]["trace"], resumeMain(1));
  // One rank: the report itself, not a list.
  ranks.pop_back();
  EXPECT_EQ(whatIfJson(ranks)["trace"], resumeMain(0));
}

}  // namespace
}  // namespace reservoir::replay
