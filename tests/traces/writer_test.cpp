// The writer on hand-built snapshots: the keys torch writes and nothing else, values beyond
// int64, settings, batching past 1000 items, memo slots past 255, large strings, errors.
// Python's pickle is the judge of what a file holds.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "model_compare.h"
#include "python_tool.h"
#include "reservoir/traces/reader.h"
#include "reservoir/traces/stack_interner.h"
#include "reservoir/traces/writer.h"

namespace reservoir::traces {
namespace {

using Json = nlohmann::ordered_json;

TraceEvent makeEvent(Action action, Addr addr, ByteCount size) {
  TraceEvent e;
  e.action = action;
  e.addr = addr;
  e.size = size;
  e.stack = StackId(0);
  return e;
}

// One device, a few events, one segment with two blocks, settings, an annotation.
Snapshot smallSnapshot() {
  Snapshot s;
  StackInterner interner(&s);
  const StackId empty = interner.emptyStack();
  const FrameId f1 = interner.frame("train.py", 12, "step");
  const FrameId f2 = interner.frame("model.py", 7, "forward");
  const std::vector<FrameId> frames = {f2, f1};
  const StackId stack = interner.stack(frames);
  DeviceTrace d;
  TraceEvent plain = makeEvent(Action::kSegmentAlloc, 1u << 21, 2u << 20);
  TraceEvent full = makeEvent(Action::kAlloc, 1u << 21, 512);
  s.setStream(full, (1ull << 63) + 5);  // beyond int64
  full.stack = stack;
  s.editExtra(full, [&](EventExtra& x) {
    x.has_frames = true;
    x.compile_context = s.strings.intern("N/A");
    x.user_metadata = s.strings.intern("");
  });
  TraceEvent oom = makeEvent(Action::kOom, 123456789012ull, 1ull << 40);
  oom.stack = empty;
  s.editExtra(oom, [](EventExtra& x) { x.has_frames = true; });
  d.push(plain, std::numeric_limits<std::int64_t>::min());  // LONG1 of 8 bytes
  d.push(full, -3);
  d.push(oom, -(1ll << 40) - 5);  // a negative LONG1 of 6 bytes
  s.devices.push_back(std::move(d));
  SegmentInfo seg;
  seg.address = 1u << 21;
  seg.total_size = 2u << 20;
  seg.allocated_size = 512;
  seg.pool = PoolId{1, -2};
  seg.stack = stack;
  seg.block_count = 2;
  s.segments.push_back(seg);
  s.blocks.push_back({1u << 21, 512, 500, stack, BlockState::kActiveAllocated});
  s.blocks.push_back({(1u << 21) + 512, (2u << 20) - 512, 0, empty, BlockState::kInactive});
  s.settings.present = true;
  s.settings.alloc_conf = "expandable_segments:True";
  s.settings.expandable_segments = true;
  s.settings.garbage_collection_threshold = 0.25;
  s.settings.pinned_num_register_threads = 4;
  s.settings.roundup_power2_divisions[3] = 8;
  s.settings.other = {{"future_flag", "True"},
                      {"future_name", "'abc'"},
                      {"future_count", "-7"},
                      {"future_none", "None"},
                      {"future_ratio", "0.5"}};
  s.annotations.push_back({"START", "optimizer.step", 0, 99});
  return s;
}

Expected<Json> pythonView(const Snapshot& snap, const WriteOptions& options = {}) {
  const auto dir = test::freshTempDir("writer-json");
  const auto path = (dir / "snap.pickle").string();
  if (Status st = writeSnapshotFile(snap, path, options); !st.ok()) return st;
  std::string out;
  if (test::runPickleTool({"check-ops", path, std::to_string(options.protocol)}, &out) != 0)
    return Status::error("opcodes differ from Python's: " + out);
  const int rc = test::runPickleTool({"json", path}, &out);
  std::filesystem::remove_all(dir);
  if (rc != 0) return Status::error("pickle_tool.py json failed: " + out);
  return Json::parse(out);
}

std::vector<std::string> keysOf(const Json& j) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  return keys;
}

TEST(Writer, WritesTorchsKeysInTorchsOrder) {
  RESERVOIR_REQUIRE_PYTHON();
  auto j = pythonView(smallSnapshot());
  ASSERT_TRUE(j.ok()) << j.message();
  using V = std::vector<std::string>;
  EXPECT_EQ(keysOf(*j), (V{"segments", "device_traces", "allocator_settings", "external_annotations"}));
  const Json& events = (*j)["device_traces"][0];
  EXPECT_EQ(keysOf(events[0]), (V{"action", "addr", "size", "stream", "time_us"}));
  EXPECT_EQ(keysOf(events[1]),
            (V{"action", "addr", "size", "stream", "time_us", "compile_context", "user_metadata", "frames"}));
  EXPECT_EQ(keysOf(events[2]), (V{"action", "device_free", "size", "stream", "time_us", "frames"}));
  const Json& seg = (*j)["segments"][0];
  // torch adds a segment's recorded stack after its blocks (an empty one before them).
  EXPECT_EQ(keysOf(seg), (V{"device", "address", "total_size", "allocated_size", "active_size", "requested_size",
                            "stream", "segment_type", "segment_pool_id", "is_expandable", "blocks", "frames"}));
  EXPECT_EQ(keysOf(seg["blocks"][0]), (V{"address", "size", "requested_size", "state", "frames"}));
  EXPECT_EQ(keysOf(seg["frames"][0]), (V{"name", "filename", "line"}));
  EXPECT_EQ(keysOf((*j)["external_annotations"][0]), (V{"stage", "name", "device", "time_us"}));
}

TEST(Writer, PythonReadsTheValues) {
  RESERVOIR_REQUIRE_PYTHON();
  for (int protocol : {2, 4}) {
    SCOPED_TRACE(protocol);
    auto j = pythonView(smallSnapshot(), {protocol, Compression::kNone, 0});
    ASSERT_TRUE(j.ok()) << j.message();
    EXPECT_EQ((*j)["device_traces"][0][0]["time_us"].get<std::int64_t>(), std::numeric_limits<std::int64_t>::min());
    EXPECT_EQ((*j)["device_traces"][0][2]["time_us"].get<std::int64_t>(), -(1ll << 40) - 5);
    const Json& full = (*j)["device_traces"][0][1];
    EXPECT_EQ(full["stream"].get<std::uint64_t>(), (1ull << 63) + 5);
    EXPECT_EQ(full["time_us"].get<std::int64_t>(), -3);
    EXPECT_EQ(full["frames"][0]["filename"], "model.py");
    EXPECT_EQ(full["frames"][1]["line"], 12);
    EXPECT_EQ((*j)["device_traces"][0][2]["device_free"].get<std::uint64_t>(), 123456789012ull);
    const Json& seg = (*j)["segments"][0];
    EXPECT_EQ(seg["segment_pool_id"], Json::parse("[1, -2]"));
    EXPECT_EQ(seg["segment_type"], "large");
    EXPECT_EQ(seg["is_expandable"], false);
    EXPECT_EQ(seg["blocks"][1]["state"], "inactive");
    const Json& st = (*j)["allocator_settings"];
    EXPECT_EQ(st["PYTORCH_CUDA_ALLOC_CONF"], "expandable_segments:True");
    EXPECT_EQ(st["max_split_size"], -1);
    EXPECT_EQ(st["garbage_collection_threshold"], 0.25);
    EXPECT_EQ(st["expandable_segments"], true);
    EXPECT_EQ(st["pinned_num_register_threads"], 4);
    EXPECT_FALSE(st.contains("release_lock_on_cudamalloc"));
    EXPECT_EQ(st["roundup_power2_divisions"]["8"], 8);
    EXPECT_EQ(st["roundup_power2_divisions"].size(), 16u);
    EXPECT_EQ(st["future_flag"], true);
    EXPECT_EQ(st["future_name"], "abc");
    EXPECT_EQ(st["future_count"], -7);
    EXPECT_TRUE(st["future_none"].is_null());
    EXPECT_EQ(st["future_ratio"], 0.5);
  }
}

TEST(Writer, RoundTripsAHandBuiltSnapshot) {
  const Snapshot s = smallSnapshot();
  for (int protocol : {2, 3, 4, 5}) {
    auto bytes = writeSnapshotBytes(s, {protocol, Compression::kNone, 0});
    ASSERT_TRUE(bytes.ok()) << bytes.message();
    auto again = readSnapshotBytes(*bytes, "hand-built");
    ASSERT_TRUE(again.ok()) << again.message();
    // The reader counts the settings keys it does not know; the hand-built model did not.
    EXPECT_EQ(again->anomalies.count(Anomaly::unknown_settings_key), s.settings.other.size());
    again->anomalies = AnomalyCounters{};
    EXPECT_TRUE(test::sameModel(s, *again));
  }
}

// Many events and stacks: APPENDS batches of 1000, memo slots past 255 (LONG_BINPUT /
// LONG_BINGET in protocols 2-3), frames past 64 KiB, and a str over 64 KiB (written unframed).
Snapshot bigSnapshot() {
  Snapshot s;
  StackInterner interner(&s);
  interner.emptyStack();
  DeviceTrace d;
  for (std::uint32_t i = 0; i < 2500; ++i) {
    const FrameId f = interner.frame("file" + std::to_string(i % 300) + ".py", i % 300, "fn");
    const FrameId root = interner.frame("main.py", 1, "main");
    const std::vector<FrameId> frames = {f, root};
    TraceEvent e = makeEvent(i % 2 ? Action::kFreeRequested : Action::kAlloc, 0x7f0000000000ull + i * 512u, i);
    e.stack = interner.stack(frames);
    s.editExtra(e, [](EventExtra& x) { x.has_frames = true; });
    d.push(e, static_cast<std::int64_t>(1796028433553601 + i));
  }
  const StringId long_context = s.strings.intern(std::string(70000, 'x'));
  s.editExtra(d.events[7], [&](EventExtra& x) { x.compile_context = long_context; });
  s.devices.push_back(std::move(d));
  return s;
}

TEST(Writer, BigSnapshotRoundTripsAndHasPythonsOpcodes) {
  const Snapshot s = bigSnapshot();
  const auto dir = test::freshTempDir("writer-big");
  std::vector<std::string> equal = {"equal", "--ordered"};
  for (int protocol : {4, 2, 3, 5}) {
    SCOPED_TRACE(protocol);
    const auto path = (dir / ("big.p" + std::to_string(protocol))).string();
    ASSERT_TRUE(writeSnapshotFile(s, path, {protocol, Compression::kNone, 0}).ok());
    auto again = readSnapshotFile(path);
    ASSERT_TRUE(again.ok()) << again.message();
    EXPECT_TRUE(test::sameModel(s, *again));
    equal.push_back(path);
    if (!test::pythonAvailable()) continue;
    std::string out;
    EXPECT_EQ(test::runPickleTool({"check-ops", path, std::to_string(protocol)}, &out), 0) << out;
  }
  if (test::pythonAvailable()) {
    std::string out;
    EXPECT_EQ(test::runPickleTool(equal, &out), 0) << out;  // all four load to the same object
  }
  std::filesystem::remove_all(dir);
}

// A cancelled write fails with "cancelled", leaves no file (nor its temporary), and keeps a file
// that was there before.
TEST(Writer, ACancelledWriteLeavesNoFileAndKeepsAnOldOne) {
  const Snapshot s = bigSnapshot();
  const auto dir = test::freshTempDir("writer-cancel");
  const auto path = (dir / "big.pickle").string();
  std::atomic<bool> cancel{true};
  WriteOptions o;
  o.cancel = &cancel;
  const Status st = writeSnapshotFile(s, path, o);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cancelled"), std::string::npos) << st.message();
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::ofstream(path) << "old";
  EXPECT_FALSE(writeSnapshotFile(s, path, o).ok());
  std::ifstream in(path);
  std::string kept;
  in >> kept;
  EXPECT_EQ(kept, "old");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  cancel = false;
  ASSERT_TRUE(writeSnapshotFile(s, path, o).ok());
  auto again = readSnapshotFile(path);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_TRUE(test::sameModel(s, *again));
  std::filesystem::remove_all(dir);
}

TEST(Writer, SharedStacksAreWrittenOnce) {
  Snapshot s;
  StackInterner interner(&s);
  interner.emptyStack();
  std::vector<FrameId> frames;
  for (int i = 0; i < 10; ++i) frames.push_back(interner.frame(std::string(50, 'a') + std::to_string(i), i, "f"));
  const StackId stack = interner.stack(frames);
  DeviceTrace d;
  for (int i = 0; i < 1000; ++i) {
    TraceEvent e = makeEvent(Action::kAlloc, 4096u * static_cast<unsigned>(i), 1);
    e.stack = stack;
    s.editExtra(e, [](EventExtra& x) { x.has_frames = true; });
    d.events.push_back(e);
  }
  s.devices.push_back(std::move(d));
  auto bytes = writeSnapshotBytes(s);
  ASSERT_TRUE(bytes.ok());
  // Written out each time, the stack alone would take 1000 * 10 * 50 bytes.
  EXPECT_LT(bytes->size(), 80000u);
}

TEST(Writer, DeviceListHasAnEntryPerIndex) {
  Snapshot s;
  StackInterner interner(&s);
  interner.emptyStack();
  s.devices.push_back({2, {makeEvent(Action::kAlloc, 1, 1)}});
  s.devices.push_back({0, {}});
  auto bytes = writeSnapshotBytes(s);
  ASSERT_TRUE(bytes.ok());
  auto again = readSnapshotBytes(*bytes, "gap");
  ASSERT_TRUE(again.ok()) << again.message();
  ASSERT_EQ(again->devices.size(), 3u);
  EXPECT_TRUE(again->devices[1].events.empty());
  EXPECT_EQ(again->devices[2].events.size(), 1u);
  EXPECT_FALSE(again->settings.present);  // not written when the model has none
}

TEST(Writer, CompressedOutputIsDetectedByTheReader) {
  const Snapshot s = smallSnapshot();
  for (Compression c : {Compression::kGzip, Compression::kZstd}) {
    for (int level : {0, 1, 9}) {
      auto bytes = writeSnapshotBytes(s, {4, c, level});
      ASSERT_TRUE(bytes.ok()) << bytes.message();
      auto again = readSnapshotBytes(*bytes, "compressed");
      ASSERT_TRUE(again.ok()) << again.message();
      EXPECT_EQ(again->compression, c);
      EXPECT_EQ(again->devices[0].events.size(), 3u);
    }
  }
}

TEST(Writer, RejectsWhatItCannotWrite) {
  const Snapshot s = smallSnapshot();
  for (int protocol : {0, 1, 6}) {
    auto bytes = writeSnapshotBytes(s, {protocol, Compression::kNone, 0});
    ASSERT_FALSE(bytes.ok());
    EXPECT_NE(bytes.message().find("protocol " + std::to_string(protocol)), std::string::npos) << bytes.message();
  }
  Snapshot broken = smallSnapshot();
  broken.devices[0].events[1].stack = StackId(99);
  auto bytes = writeSnapshotBytes(broken);
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.message().find("stack"), std::string::npos) << bytes.message();

  const std::string path = "/nonexistent-dir/for/sure/out.pickle";
  const Status st = writeSnapshotFile(s, path);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
}

}  // namespace
}  // namespace reservoir::traces
