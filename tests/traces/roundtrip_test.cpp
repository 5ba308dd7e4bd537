// read -> write -> read gives the same model, for every real trace, every protocol and both
// compressions; Python's own copies of a trace read to the same model as the original; and
// Python loads our output to exactly the object it loads from the original.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "model_compare.h"
#include "python_tool.h"
#include "reservoir/traces/reader.h"
#include "reservoir/traces/writer.h"
#include "test_paths.h"
#include "trace_corpus.h"

namespace reservoir::traces {
namespace {

struct Variant {
  std::string suffix;
  WriteOptions options;
};

const std::vector<Variant> kVariants = {
    {"p2.pickle", {2, Compression::kNone, 0}}, {"p3.pickle", {3, Compression::kNone, 0}},
    {"p4.pickle", {4, Compression::kNone, 0}}, {"p5.pickle", {5, Compression::kNone, 0}},
    {"p4.gz", {4, Compression::kGzip, 0}},     {"p4.zst", {4, Compression::kZstd, 0}},
    {"p2.zst", {2, Compression::kZstd, 0}},
};

class RoundTripTest : public ::testing::TestWithParam<test::TraceFile> {
 protected:
  void SetUp() override {
    if (GetParam().path.empty()) RESERVOIR_REQUIRE_SHARED_TRACES();
    auto snap = readSnapshotFile(GetParam().path.string());
    ASSERT_TRUE(snap.ok()) << snap.message();
    original_ = std::move(*snap);
  }
  Snapshot original_;
};

TEST_P(RoundTripTest, WriteThenReadGivesTheSameModel) {
  for (const Variant& v : kVariants) {
    SCOPED_TRACE(v.suffix);
    auto bytes = writeSnapshotBytes(original_, v.options);
    ASSERT_TRUE(bytes.ok()) << bytes.message();
    auto again = readSnapshotBytes(*bytes, v.suffix);
    ASSERT_TRUE(again.ok()) << again.message();
    EXPECT_EQ(again->pickle_protocol, v.options.protocol);
    EXPECT_EQ(again->compression, v.options.compression);
    EXPECT_EQ(again->file_bytes, bytes->size());
    EXPECT_TRUE(test::sameModel(original_, *again));
  }
}

TEST_P(RoundTripTest, WriteFileMatchesWriteBytes) {
  const auto dir = test::freshTempDir("write-file");
  const auto path = (dir / "out.pickle").string();
  ASSERT_TRUE(writeSnapshotFile(original_, path).ok());
  auto bytes = writeSnapshotBytes(original_);
  ASSERT_TRUE(bytes.ok());
  std::ifstream in(path, std::ios::binary);
  const std::vector<std::uint8_t> on_disk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(on_disk, *bytes);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  std::filesystem::remove_all(dir);
}

TEST_P(RoundTripTest, PythonCopiesReadToTheSameModel) {
  RESERVOIR_REQUIRE_PYTHON();
  const auto dir = test::freshTempDir("python-copies");
  const auto prefix = (dir / "copy").string();
  std::string out;
  ASSERT_EQ(test::runPickleTool({"copies", GetParam().path.string(), prefix}, &out), 0) << out;
  const std::vector<std::pair<std::string, int>> copies = {
      {".p2.pickle", 2}, {".p3.pickle", 3}, {".p5.pickle", 5}, {".p4.gz", 4}};
  for (const auto& [suffix, protocol] : copies) {
    SCOPED_TRACE(suffix);
    auto snap = readSnapshotFile(prefix + suffix);
    ASSERT_TRUE(snap.ok()) << snap.message();
    EXPECT_EQ(snap->pickle_protocol, protocol);
    EXPECT_TRUE(test::sameModel(original_, *snap));
  }
  std::filesystem::remove_all(dir);
}

TEST_P(RoundTripTest, PythonLoadsOurOutputAsTheOriginal) {
  RESERVOIR_REQUIRE_PYTHON();
  const auto dir = test::freshTempDir("python-loads");
  // Python-made originals also fix the key order; LibTorch's pickler orders entry keys its own way.
  std::vector<std::string> args = {"equal"};
  if (original_.pickle_protocol >= 4) args.push_back("--ordered");
  args.push_back(GetParam().path.string());
  for (const Variant& v : kVariants) {
    // Protocol 3 differs from 2 only in its PROTO byte; the read-back test covers it.
    if (v.options.protocol == 3 || (v.options.protocol == 2 && v.options.compression != Compression::kNone)) continue;
    const auto path = (dir / v.suffix).string();
    ASSERT_TRUE(writeSnapshotFile(original_, path, v.options).ok());
    args.push_back(path);
  }
  std::string out;
  EXPECT_EQ(test::runPickleTool(args, &out), 0) << out;
  std::filesystem::remove_all(dir);
}

// The opcodes are those Python's pickler would pick (minimal ints, SHORT_BINUNICODE, 64 KiB
// frames, sequential memo slots). Checked on the samples only: the choice does not depend on the
// trace, and pickletools takes seconds per megabyte.
class WriterOpcodesTest : public RoundTripTest {};

TEST_P(WriterOpcodesTest, AreThePythonPicklersChoices) {
  RESERVOIR_REQUIRE_PYTHON();
  const auto dir = test::freshTempDir("python-ops");
  for (int protocol : {2, 3, 4, 5}) {
    const auto path = (dir / ("p" + std::to_string(protocol))).string();
    ASSERT_TRUE(writeSnapshotFile(original_, path, {protocol, Compression::kNone, 0}).ok());
    std::string out;
    EXPECT_EQ(test::runPickleTool({"check-ops", path, std::to_string(protocol)}, &out), 0) << out;
  }
  std::filesystem::remove_all(dir);
}

std::vector<test::TraceFile> roundTripFiles() {
  auto files = test::sharedTraceFiles();
  if (files.empty()) files.push_back({"shared_traces_absent", {}});  // reports the skip
  for (auto& f : test::sampleTraceFiles()) files.push_back(std::move(f));
  return files;
}

INSTANTIATE_TEST_SUITE_P(Traces, RoundTripTest, ::testing::ValuesIn(roundTripFiles()),
                         [](const auto& param_info) { return test::testNameOf(param_info.param.label); });
INSTANTIATE_TEST_SUITE_P(Samples, WriterOpcodesTest, ::testing::ValuesIn(test::sampleTraceFiles()),
                         [](const auto& param_info) { return test::testNameOf(param_info.param.label); });

}  // namespace
}  // namespace reservoir::traces
