// Malformed and hostile inputs (tests/data/bad, made by make_bad_inputs.py): the reader fails
// with its class's plain words first (the headline), then the file's name, the offset of the
// offending opcode and the reason, and never crashes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "reservoir/traces/reader.h"
#include "test_paths.h"
#include "trace_corpus.h"

namespace reservoir::traces {
namespace {

struct BadCase {
  std::string file;
  std::optional<std::uint64_t> offset;
  std::string headline;
  std::vector<std::string> reasons;
  ReadLimits limits;
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.file; }

std::filesystem::path badDir() { return test::testDataDir() / "bad"; }

ReadLimits limitsFrom(const nlohmann::json& j) {
  ReadLimits limits;
  for (const auto& [key, value] : j.items()) {
    const auto v = value.get<std::uint64_t>();
    if (key == "max_stack_values")
      limits.max_stack_values = v;
    else if (key == "max_marks")
      limits.max_marks = v;
    else if (key == "max_memo_entries")
      limits.max_memo_entries = v;
    else if (key == "max_memo_gap")
      limits.max_memo_gap = v;
    else if (key == "max_string_bytes")
      limits.max_string_bytes = v;
    else if (key == "max_container_items")
      limits.max_container_items = v;
    else if (key == "memory_floor_bytes")
      limits.memory_floor_bytes = v;
    else if (key == "memory_per_pickle_byte")
      limits.memory_per_pickle_byte = v;
    else
      ADD_FAILURE() << "expected.json: unknown limit " << key;
  }
  return limits;
}

std::vector<BadCase> loadCases() {
  std::ifstream in(badDir() / "expected.json");
  const auto table = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  std::vector<BadCase> cases;
  if (!table.is_array()) return {{"expected.json is missing or not a JSON array", std::nullopt, {}, {}, {}}};
  for (const auto& c : table) {
    BadCase bc{c.at("file").get<std::string>(),
               std::nullopt,
               c.value("headline", std::string()),
               c.at("reasons").get<std::vector<std::string>>(),
               {}};
    if (!c.at("offset").is_null()) bc.offset = c.at("offset").get<std::uint64_t>();
    if (c.contains("limits")) bc.limits = limitsFrom(c.at("limits"));
    cases.push_back(std::move(bc));
  }
  return cases;
}

// "HEADLINE (file NAME, byte N[ of ...]: detail)": plain words first, then where and why.
void expectExplained(const Status& status, const std::string& name, const BadCase& c) {
  const std::string& message = status.message();
  ASSERT_FALSE(c.headline.empty()) << c.file << ": expected.json gives no headline";
  const std::string start = c.headline + " (file " + name;
  EXPECT_EQ(message.substr(0, start.size()), start) << "expected the message to start with the headline";
  EXPECT_EQ(status.headline(), c.headline);
  EXPECT_EQ(status.file(), name);
  if (c.offset) {
    const std::string at = start + ", byte " + std::to_string(*c.offset);
    EXPECT_EQ(message.substr(0, at.size()), at) << "expected '" << at << "' in: " << message;
    const char next = message.size() > at.size() ? message[at.size()] : '\0';
    EXPECT_TRUE(next == ':' || next == ' ') << "the offset is not " << *c.offset << " in: " << message;
    EXPECT_TRUE(status.hasByteOffset());
    EXPECT_EQ(status.byteOffset(), *c.offset);
  }
  for (const std::string& reason : c.reasons)
    EXPECT_NE(message.find(reason), std::string::npos) << "expected '" << reason << "' in: " << message;
}

class BadInputTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInputTest, FileReadFailsWithOffsetAndReason) {
  const BadCase& c = GetParam();
  ASSERT_FALSE(c.reasons.empty()) << c.file;
  ReadOptions options;
  options.limits = c.limits;
  const std::string path = (badDir() / c.file).string();
  auto snap = readSnapshotFile(path, options);
  ASSERT_FALSE(snap.ok()) << path << " was read as a snapshot";
  expectExplained(snap.status(), path, c);
}

TEST_P(BadInputTest, BytesReadFailsTheSameWay) {
  const BadCase& c = GetParam();
  std::ifstream in(badDir() / c.file, std::ios::binary);
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ReadOptions options;
  options.limits = c.limits;
  auto snap = readSnapshotBytes(bytes, "in-memory " + c.file, options);
  ASSERT_FALSE(snap.ok());
  expectExplained(snap.status(), "in-memory " + c.file, c);
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadInputTest, ::testing::ValuesIn(loadCases()),
                         [](const auto& param_info) { return test::testNameOf(param_info.param.file); });

TEST(BadInputCorpus, EveryFileHasAnExpectation) {
  std::set<std::string> listed;
  for (const BadCase& c : loadCases()) {
    EXPECT_TRUE(listed.insert(c.file).second) << c.file << " is listed twice";
    EXPECT_TRUE(std::filesystem::is_regular_file(badDir() / c.file)) << c.file << " is listed but missing";
  }
  for (const auto& e : std::filesystem::directory_iterator(badDir())) {
    const std::string name = e.path().filename().string();
    if (name == "expected.json" || name == "make_bad_inputs.py") continue;
    EXPECT_TRUE(listed.count(name)) << name << " has no entry in expected.json";
  }
}

}  // namespace
}  // namespace reservoir::traces
