// Hostile and careless inputs beyond the bad-file corpus: a million device traces (read and
// write stay linear, the reader refuses past its cap), sizes out of range, and output files
// that are devices, links or directories (never replaced, errors reported).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "reservoir/traces/reader.h"
#include "reservoir/traces/stack_interner.h"
#include "reservoir/traces/writer.h"

namespace reservoir::traces {
namespace {

namespace fs = std::filesystem;

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// pickle.dump({'segments': [], 'device_traces': [[] for _ in range(n)]}, f, protocol=4), as
// Python writes it without the memo and framing: 2 bytes per empty list.
std::vector<std::uint8_t> emptyDevicesPickle(std::size_t n) {
  const std::string head = std::string("\x80\x04}(\x8c\x08") + "segments]" + "\x8c\x0d" + "device_traces](";
  std::vector<std::uint8_t> bytes(head.begin(), head.end());
  for (std::size_t i = 0; i < n; ++i) bytes.push_back(']');
  for (char c : std::string("eu.")) bytes.push_back(static_cast<std::uint8_t>(c));
  return bytes;
}

TEST(HostileInput, AMillionDeviceTracesAreRefusedFast) {
  const auto t0 = std::chrono::steady_clock::now();
  auto snap = readSnapshotBytes(emptyDevicesPickle(1'000'000), "devices.pickle");
  ASSERT_FALSE(snap.ok());
  EXPECT_NE(snap.message().find("'device_traces' lists 1000000 devices, more than the 1024"), std::string::npos)
      << snap.message();
  EXPECT_LT(secondsSince(t0), 5.0);
}

TEST(HostileInput, TheCapIsInclusive) {
  auto snap = readSnapshotBytes(emptyDevicesPickle(1024), "devices.pickle");
  ASSERT_TRUE(snap.ok()) << snap.message();
  EXPECT_EQ(snap->devices.size(), 1024u);
}

// The writer looks each device number up once, not by a scan per device (which took minutes
// at 1e6 devices).
TEST(HostileInput, WritingManyDevicesIsLinear) {
  Snapshot s;
  StackInterner interner(&s);
  interner.emptyStack();
  for (std::int64_t d = 0; d < 200'000; ++d) s.devices.emplace_back().device = d;
  const auto t0 = std::chrono::steady_clock::now();
  auto bytes = writeSnapshotBytes(s);
  ASSERT_TRUE(bytes.ok()) << bytes.message();
  EXPECT_LT(secondsSince(t0), 3.0);    // a scan per device: 2e10 comparisons, tens of seconds
  EXPECT_GT(bytes->size(), 200'000u);  // at least one byte per device's list
}

Snapshot eventsAt(const std::vector<std::int64_t>& times) {
  Snapshot s;
  StackInterner interner(&s);
  const StackId empty = interner.emptyStack();
  DeviceTrace d;
  for (std::size_t i = 0; i < times.size(); ++i) {
    TraceEvent e;
    e.action = Action::kAlloc;
    e.addr = 4096 * (i + 1);
    e.size = 512;
    e.stack = empty;
    d.push(e, times[i]);
  }
  s.devices.push_back(std::move(d));
  return s;
}

TEST(HostileInput, SizesOutOfRangeNameTheEntry) {
  Snapshot s = eventsAt({1, 2, 3});
  s.devices[0].events[2].size = 1ull << 63;
  auto snap = readSnapshotBytes(*writeSnapshotBytes(s), "huge.pickle");
  ASSERT_FALSE(snap.ok());
  EXPECT_NE(snap.message().find("the snapshot is damaged (file huge.pickle: device_traces[0] entry 2 ('alloc'): 'size' "
                                "is 9223372036854775808"),
            std::string::npos)
      << snap.message();
  s.devices[0].events[2].size = (1ull << 62) - 1;  // the largest size taken
  EXPECT_TRUE(readSnapshotBytes(*writeSnapshotBytes(s), "big.pickle").ok());
}

// The reader's memory (issue 16): values under keys it does not use are counted, not stored,
// and a total budget relative to the pickle's size stops floods that each limit lets through.
std::vector<std::uint8_t> withUnknownKey(const std::string& value) {
  const std::string text =
      std::string("\x80\x04}(\x8c\x08segments]\x8c\x0d") + "device_traces]]a\x8c\x04junk" + value + "u.";
  return {text.begin(), text.end()};
}

// A memo flood padded under the per-byte budget (None, MEMOIZE, POP, None, POP: 16 bytes of memo
// for 5 bytes of pickle) from a small compressed file reached 4.2 GB; the cap stops any read at a
// fixed size, whatever the pickle's length. Here with a 64 MiB cap on a 40 MB flood.
TEST(HostileInput, APaddedMemoFloodStopsAtTheMemoryCap) {
  std::vector<std::uint8_t> bytes{0x80, 0x04};
  for (int i = 0; i < 8'000'000; ++i) bytes.insert(bytes.end(), {'N', 0x94, '0', 'N', '0'});
  bytes.push_back('.');
  ReadOptions options;
  EXPECT_EQ(options.limits.memory_cap_bytes, defaultReadMemoryCap());
  options.limits.memory_cap_bytes = 64ull << 20;
  auto snap = readSnapshotBytes(bytes, "flood.pickle", options);
  ASSERT_FALSE(snap.ok());
  EXPECT_NE(snap.message().find("over its cap of 64 MiB"), std::string::npos) << snap.message();
  EXPECT_NE(snap.message().find("RESERVOIR_MAX_MEMORY"), std::string::npos) << snap.message();
  // The cap front ends set is the default of every read after it.
  setDefaultReadMemoryCap(32ull << 20);
  EXPECT_EQ(ReadLimits{}.memory_cap_bytes, 32ull << 20);
  setDefaultReadMemoryCap(std::nullopt);
  EXPECT_EQ(ReadLimits{}.memory_cap_bytes, std::nullopt);
}

// With no cap set, the cap follows the input (issue 32): a plain file gets room in proportion to
// its size, so a well-formed snapshot of any size reads (a 20 M-entry trace was refused at the
// old fixed 1 GiB), while a compressed file that decompresses far beyond what real traces do
// (here 400,000 identical entries, ~10 MiB in memory from a small .zst) still meets the cap.
// The floor is scaled down with the input (8 MiB for the default 1 GiB).
TEST(HostileInput, TheDefaultCapFollowsTheInput) {
  std::vector<std::int64_t> times(400000, 7);
  Snapshot s = eventsAt(times);
  for (auto& e : s.devices[0].events) e.addr = 4096;  // alike, so that zstd packs them tight
  ReadOptions options;
  ASSERT_EQ(options.limits.memory_cap_bytes, std::nullopt);
  options.limits.memory_cap_floor_bytes = 8u << 20;
  options.limits.memory_floor_bytes = 8u << 20;
  auto plain = writeSnapshotBytes(s);
  ASSERT_TRUE(plain.ok()) << plain.message();
  EXPECT_EQ(memoryCapFor(options.limits, plain->size(), false), (8u << 20) + 4 * plain->size());
  auto read = readSnapshotBytes(*plain, "plain.pickle", options);
  ASSERT_TRUE(read.ok()) << plain->size() << " bytes: " << read.message();
  EXPECT_EQ(read->devices[0].events.size(), times.size());
  // The same reader under the old kind of cap, fixed at the floor: refused.
  ReadOptions fixed = options;
  fixed.limits.memory_cap_bytes = 8u << 20;
  auto refused = readSnapshotBytes(*plain, "plain.pickle", fixed);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("over its cap of 8 MiB: a hostile file"), std::string::npos) << refused.message();
  // Compressed 100 times and more: stopped, and the message says how the cap was set.
  WriteOptions wo;
  wo.compression = Compression::kZstd;
  auto packed = writeSnapshotBytes(s, wo);
  ASSERT_TRUE(packed.ok()) << packed.message();
  ASSERT_LT(packed->size() * 100, plain->size());
  auto bomb = readSnapshotBytes(*packed, "packed.pickle.zst", options);
  ASSERT_FALSE(bomb.ok());
  EXPECT_NE(bomb.message().find("over its cap of 8 MiB (8 MiB + 64 x the 0.0"), std::string::npos) << bomb.message();
  EXPECT_NE(bomb.message().find(" MiB compressed file): a hostile file"), std::string::npos) << bomb.message();
  EXPECT_NE(bomb.message().find("RESERVOIR_MAX_MEMORY"), std::string::npos) << bomb.message();
  // 0 is no cap at all.
  fixed.limits.memory_cap_bytes = 0;
  EXPECT_TRUE(readSnapshotBytes(*packed, "packed.pickle.zst", fixed).ok());
  EXPECT_EQ(memoryCapFor(fixed.limits, 1, true), 0u);
  // A cap past what the arithmetic holds is none, not a wrapped small one.
  EXPECT_EQ(memoryCapFor(options.limits, ~std::uint64_t{0} / 2, true), 0u);
}

// One list memoized in 200,000 slots, then each slot stored again (LONG_BINPUT): each overwrite
// scanned the list's slot record, 10 s for this 1.2 MB file. Now the overwrites are linear.
// MARK, None, POP_MARK over and over keeps no memory but can decompress to any length (8 GB from
// an 812 KB .zst took 24 s): the read stops at 1.5 times the memory cap. Here a 40 MB pickle, 16 MiB cap.
TEST(HostileInput, AnEndlessPickleThatKeepsNothingStopsAtOneAndAHalfTimesTheCap) {
  std::vector<std::uint8_t> bytes{0x80, 0x04};
  for (int i = 0; i < 13'000'000; ++i) bytes.insert(bytes.end(), {'(', 'N', '1'});
  bytes.push_back('.');
  ReadOptions options;
  options.limits.memory_cap_bytes = 16ull << 20;
  auto snap = readSnapshotBytes(bytes, "endless.pickle", options);
  ASSERT_FALSE(snap.ok());
  EXPECT_NE(snap.message().find("runs on past"), std::string::npos) << snap.message();
  EXPECT_NE(snap.message().find("1.5 times the reader's memory cap of 16 MiB"), std::string::npos) << snap.message();
}

TEST(HostileInput, OverwritingManyMemoSlotsOfOneListIsLinear) {
  auto text = [](std::string_view s) {
    std::vector<std::uint8_t> b{0x8c, static_cast<std::uint8_t>(s.size())};
    b.insert(b.end(), s.begin(), s.end());
    return b;
  };
  std::vector<std::uint8_t> bytes{0x80, 0x04, '}', '('};
  for (const char* piece : {"segments", "device_traces"}) {
    const auto t = text(piece);
    bytes.insert(bytes.end(), t.begin(), t.end());
    bytes.push_back(']');
  }
  bytes.push_back(']');
  bytes.push_back('a');  // device_traces = [[]]
  const auto junk = text("junk");
  bytes.insert(bytes.end(), junk.begin(), junk.end());
  bytes.push_back(']');
  constexpr std::uint32_t kSlots = 200'000;
  bytes.insert(bytes.end(), kSlots, 0x94);  // MEMOIZE: the list in slots 0..N-1
  for (std::uint32_t i = 0; i < kSlots; ++i) {
    bytes.push_back('r');  // LONG_BINPUT i: the same list again
    for (int k = 0; k < 4; ++k) bytes.push_back(static_cast<std::uint8_t>(i >> (8 * k)));
  }
  bytes.push_back('u');
  bytes.push_back('.');
  const auto t0 = std::chrono::steady_clock::now();
  auto snap = readSnapshotBytes(bytes, "quad.pickle");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(snap.ok()) << snap.message();
  EXPECT_LT(seconds, 5.0);  // about 0.03 s; quadratic, it took 10 s (and minutes under ASan)
}

TEST(HostileInput, ListsOfScalarsUnderUnknownKeysAreNotMaterialised) {
  // 16 lists of 2^20 None: 256 MiB as stored values, 16 MiB of pickle. The stack holds one
  // list's items before APPENDS (16-32 MiB): the budget leaves room for that, not for more.
  std::string lists = "]";
  for (int l = 0; l < 16; ++l) lists += "](" + std::string(1u << 20, 'N') + "ea";
  ReadOptions options;
  options.limits.memory_floor_bytes = 64u << 20;
  options.limits.memory_per_pickle_byte = 0;
  auto snap = readSnapshotBytes(withUnknownKey(lists), "nones.pickle", options);
  ASSERT_TRUE(snap.ok()) << snap.message();
  EXPECT_EQ(snap->anomalies.count(Anomaly::unknown_top_level_key), 1u);
}

TEST(HostileInput, AMemoFloodStopsAtTheBudget) {
  // None, then MEMOIZE 2^23 times: 16 bytes of memo per byte of pickle.
  ReadOptions options;
  options.limits.memory_floor_bytes = 16u << 20;
  auto snap = readSnapshotBytes(withUnknownKey("N" + std::string(1u << 23, '\x94')), "memo.pickle", options);
  ASSERT_FALSE(snap.ok());
  EXPECT_NE(snap.message().find("(file memo.pickle, byte "), std::string::npos) << snap.message();
  EXPECT_NE(snap.message().find("over its budget of"), std::string::npos) << snap.message();
  // The same pickle with room for it reads: the budget, not another limit, stopped it.
  options.limits.memory_floor_bytes = 1u << 30;
  EXPECT_TRUE(readSnapshotBytes(withUnknownKey("N" + std::string(1u << 23, '\x94')), "memo.pickle", options).ok());
}

// A real snapshot fits the budget from its first MiB on: the room the reader reserves for the
// trace entries to come (from the input's size, to avoid growing the list by doubling) is
// address space, not memory, and is not counted against it (it was: a 91 MB training trace was
// refused at its first MiB, "needs 524 MiB ... over its budget of 516 MiB").
TEST(HostileInput, TheRoomReservedForEntriesIsNotCountedAgainstTheBudget) {
  std::vector<std::int64_t> times(300000);
  for (std::size_t i = 0; i < times.size(); ++i) times[i] = static_cast<std::int64_t>(i);
  auto bytes = writeSnapshotBytes(eventsAt(times));
  ASSERT_TRUE(bytes.ok());
  ReadOptions options;
  options.limits.memory_floor_bytes = 8u << 20;  // the 512 MiB floor scaled down with the input
  auto snap = readSnapshotBytes(*bytes, "many.pickle", options);
  ASSERT_TRUE(snap.ok()) << bytes->size() << " bytes: " << snap.message();
  EXPECT_EQ(snap->devices[0].events.size(), times.size());
}

// A string far larger than the compressed file (which the old "64 x the stored size" rule refused)
// reads: the decompressed stream backs it.
TEST(HostileInput, ALongStringInsideACompressedFileReads) {
  Snapshot s = eventsAt({1, 2});
  StackInterner interner(&s);
  const FrameId f = interner.frame(std::string(32u << 20, 'x'), 1, "f");
  s.devices[0].events[0].stack = interner.stack(std::vector<FrameId>{f});
  s.editExtra(s.devices[0].events[0], [](EventExtra& x) { x.has_frames = true; });
  for (Compression c : {Compression::kGzip, Compression::kZstd}) {
    WriteOptions wo;
    wo.compression = c;
    auto bytes = writeSnapshotBytes(s, wo);
    ASSERT_TRUE(bytes.ok()) << bytes.message();
    ASSERT_LT(bytes->size() * 64 + 1024, 32u << 20);  // what the old rule refused
    auto snap = readSnapshotBytes(*bytes, "long.pickle");
    ASSERT_TRUE(snap.ok()) << snap.message();
    EXPECT_EQ(snap->str(snap->frames.at(snap->stack(snap->devices[0].events[0].stack)[0].value()).filename).size(),
              32u << 20);
  }
  // Plain: a string longer than the whole file is refused before anything is allocated.
  const std::string lie = std::string("\x80\x04\x8d") + std::string("\x00\x00\x00\x08\x00\x00\x00\x00", 8) + "x.";
  auto snap = readSnapshotBytes(std::vector<std::uint8_t>(lie.begin(), lie.end()), "lie.pickle");
  ASSERT_FALSE(snap.ok());
  EXPECT_NE(snap.message().find("more than the input can hold"), std::string::npos) << snap.message();
}

TEST(HostileInput, TimesGoingBackwardsAreAnAnomaly) {
  auto snap = readSnapshotBytes(*writeSnapshotBytes(eventsAt({5'000'000, 2'000'000, 1'419'000})), "t.pickle");
  ASSERT_TRUE(snap.ok()) << snap.message();
  EXPECT_EQ(snap->anomalies.count(Anomaly::time_goes_backwards), 2u);
  EXPECT_EQ(snap->anomalies.examples(Anomaly::time_goes_backwards).front(), "device 0 entry 1");
  auto fine = readSnapshotBytes(*writeSnapshotBytes(eventsAt({1, 1, 2})), "t.pickle");
  ASSERT_TRUE(fine.ok());
  EXPECT_EQ(fine->anomalies.count(Anomaly::time_goes_backwards), 0u);
}

// A segment of a device that 'device_traces' does not list is shown under no device: counted as
// a data-loss anomaly, with the segment named, not left out without a word.
TEST(HostileInput, ASegmentOfNoListedDeviceIsAnAnomaly) {
  Snapshot s = eventsAt({1, 2});
  for (std::int64_t device : {0, 5}) {
    SegmentInfo seg;
    seg.device = device;
    seg.address = 1ull << 30;
    seg.total_size = 2 << 20;
    seg.stack = s.devices[0].events[0].stack;
    s.segments.push_back(seg);
  }
  auto snap = readSnapshotBytes(*writeSnapshotBytes(s), "t.pickle");
  ASSERT_TRUE(snap.ok()) << snap.message();
  EXPECT_EQ(snap->anomalies.count(Anomaly::segment_of_no_device), 1u);
  ASSERT_FALSE(snap->anomalies.examples(Anomaly::segment_of_no_device).empty());
  EXPECT_EQ(snap->anomalies.examples(Anomaly::segment_of_no_device).front(), "segments[1] (device 5)");
}

class OutputFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("reservoir-out-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(OutputFiles, ARegularFileIsReplacedAndNoTempStays) {
  const fs::path out = dir_ / "a.csv";
  std::ofstream(out) << "old contents, longer than the new";
  ASSERT_TRUE(writeOutputFile(out.string(), "new").ok());
  std::ifstream in(out);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "new");
  EXPECT_FALSE(fs::exists(dir_ / "a.csv.tmp"));
}

TEST_F(OutputFiles, ADeviceIsWrittenInPlaceAndItsErrorsReported) {
  // A link to /dev/full: were the link replaced by a renamed temp file, the write would "succeed".
  const fs::path link = dir_ / "full";
  fs::create_symlink("/dev/full", link);
  Status st = writeOutputFile(link.string(), std::string(100'000, 'x'));
  ASSERT_FALSE(st.ok()) << "writing to /dev/full succeeded";
  EXPECT_NE(st.message().find(link.string() + ": write failed"), std::string::npos) << st.message();
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_FALSE(fs::exists(dir_ / "full.tmp"));

  const fs::path null_link = dir_ / "null";
  fs::create_symlink("/dev/null", null_link);
  Snapshot snap = eventsAt({1, 2});
  EXPECT_TRUE(writeSnapshotFile(snap, null_link.string()).ok());
  EXPECT_TRUE(fs::is_symlink(null_link));
  EXPECT_FALSE(fs::exists(dir_ / "null.tmp"));
  struct stat st_null {};
  ASSERT_EQ(::stat("/dev/null", &st_null), 0);
  EXPECT_TRUE(S_ISCHR(st_null.st_mode));
}

// A link to a regular file (say /dev/stdout while the shell redirects it to a file) is written
// through: the link stays a link and what it points at gets the bytes.
TEST_F(OutputFiles, ALinkToAFileIsWrittenThroughNotReplaced) {
  const fs::path target = dir_ / "target.csv";
  std::ofstream(target) << "old";
  const fs::path link = dir_ / "link.csv";
  fs::create_symlink(target, link);
  ASSERT_TRUE(writeOutputFile(link.string(), "new").ok());
  EXPECT_TRUE(fs::is_symlink(link));
  std::ifstream in(target);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "new");
  EXPECT_FALSE(fs::exists(dir_ / "link.csv.tmp"));
}

// An X.tmp that is already there (a killed run's, or a link planted to a victim file) is neither
// followed nor overwritten nor removed: the write is refused and says why.
TEST_F(OutputFiles, AnExistingTempIsNeitherFollowedNorOverwritten) {
  const fs::path victim = dir_ / "victim.txt";
  std::ofstream(victim) << "precious";
  const fs::path out = dir_ / "a.pickle";
  std::ofstream(out) << "old";
  fs::create_symlink(victim, dir_ / "a.pickle.tmp");
  Status st = writeSnapshotFile(eventsAt({1}), out.string());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("a.pickle.tmp already exists"), std::string::npos) << st.message();
  EXPECT_TRUE(fs::is_symlink(dir_ / "a.pickle.tmp"));
  auto text = [](const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(text(victim), "precious");
  EXPECT_EQ(text(out), "old");
  removeTemporaryFilesNow();  // lists only temporaries this process created: none now
  EXPECT_TRUE(fs::is_symlink(dir_ / "a.pickle.tmp"));
}

TEST_F(OutputFiles, ADirectoryIsRefused) {
  Status st = writeOutputFile(dir_.string(), "x");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("is a directory"), std::string::npos) << st.message();
  EXPECT_FALSE(fs::exists(dir_.string() + ".tmp"));
}

TEST_F(OutputFiles, AFailedWriteLeavesTheOldFileAndNoTemp) {
  const fs::path out = dir_ / "missing-dir" / "a.pickle";
  Status st = writeSnapshotFile(eventsAt({1}), out.string());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cannot create"), std::string::npos) << st.message();
  EXPECT_FALSE(fs::exists(out.string() + ".tmp"));
}

}  // namespace
}  // namespace reservoir::traces
