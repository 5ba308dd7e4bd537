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
  for (std::int64_t d = 0; d < 200'000; ++d) s.devices.push_back(DeviceTrace{d, {}});
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
    e.time_us = times[i];
    e.stack = empty;
    d.events.push_back(e);
  }
  s.devices.push_back(std::move(d));
  return s;
}

TEST(HostileInput, SizesOutOfRangeNameTheEntry) {
  Snapshot s = eventsAt({1, 2, 3});
  s.devices[0].events[2].size = 1ull << 63;
  auto snap = readSnapshotBytes(*writeSnapshotBytes(s), "huge.pickle");
  ASSERT_FALSE(snap.ok());
  EXPECT_NE(snap.message().find("huge.pickle: device_traces[0] entry 2 ('alloc'): 'size' is 9223372036854775808"),
            std::string::npos)
      << snap.message();
  s.devices[0].events[2].size = (1ull << 62) - 1;  // the largest size taken
  EXPECT_TRUE(readSnapshotBytes(*writeSnapshotBytes(s), "big.pickle").ok());
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
