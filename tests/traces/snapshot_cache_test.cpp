// The snapshot cache: a read kept and loaded again gives the model the pickle gives, for every
// real trace; an entry is used only for the same file, unchanged, read with the same limits; a
// damaged entry is passed over; the folder is trimmed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "model_compare.h"
#include "reservoir/traces/reader.h"
#include "reservoir/traces/snapshot_cache.h"
#include "test_paths.h"
#include "trace_corpus.h"

namespace reservoir::traces {
namespace {

namespace fs = std::filesystem;

fs::path freshFolder(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("reservoir-cache-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all);  // whatever the umask: a cache folder must be the user's alone
  return dir;
}

ReadOptions cachedIn(const fs::path& folder) {
  ReadOptions o;
  // Every file, kept at once; any entry may be pushed out.
  o.cache = SnapshotCache{.folder = folder.string(), .min_file_bytes = 0, .keep_used_ns = 0, .settle_ns = 0};
  return o;
}

std::vector<fs::path> entriesIn(const fs::path& folder) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(folder))
    if (e.path().extension() == ".snapshot") out.push_back(e.path());
  return out;
}

void expectSameRead(const Snapshot& parsed, const Snapshot& loaded) {
  EXPECT_TRUE(test::sameModel(parsed, loaded));
  EXPECT_EQ(parsed.pickle_protocol, loaded.pickle_protocol);
  EXPECT_EQ(parsed.compression, loaded.compression);
  EXPECT_EQ(parsed.file_bytes, loaded.file_bytes);
  EXPECT_EQ(parsed.pickle_bytes, loaded.pickle_bytes);
  EXPECT_EQ(parsed.strings.size(), loaded.strings.size());  // the same ids, not only the same names
  EXPECT_EQ(parsed.extras.size(), loaded.extras.size());
  EXPECT_EQ(parsed.stack_offsets, loaded.stack_offsets);
  for (std::size_t d = 0; d < parsed.devices.size() && d < loaded.devices.size(); ++d)
    EXPECT_TRUE(parsed.devices[d].times == loaded.devices[d].times);
}

class SnapshotCacheTrace : public ::testing::TestWithParam<test::TraceFile> {};

TEST_P(SnapshotCacheTrace, ALoadedEntryIsTheModelThePickleGives) {
  if (GetParam().path.empty()) RESERVOIR_REQUIRE_SHARED_TRACES();
  const fs::path folder = freshFolder("trace");
  const auto parsed = readSnapshotFile(GetParam().path.string(), ReadOptions{});
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  const auto before = snapshotCacheCounts();
  const auto first = readSnapshotFile(GetParam().path.string(), cachedIn(folder));
  ASSERT_TRUE(first.ok()) << first.message();
  ASSERT_EQ(entriesIn(folder).size(), 1u) << "the read was not kept";
  const auto second = readSnapshotFile(GetParam().path.string(), cachedIn(folder));
  ASSERT_TRUE(second.ok()) << second.message();
  EXPECT_EQ(snapshotCacheCounts().stored, before.stored + 1);
  EXPECT_EQ(snapshotCacheCounts().loaded, before.loaded + 1) << "the entry was not used";
  expectSameRead(*parsed, *second);
  fs::remove_all(folder);
}

std::vector<test::TraceFile> cacheFiles() {
  auto files = test::sharedTraceFiles();
  if (files.empty()) files.push_back({"shared_traces_absent", {}});
  for (auto& f : test::sampleTraceFiles()) files.push_back(std::move(f));
  return files;
}

INSTANTIATE_TEST_SUITE_P(Traces, SnapshotCacheTrace, ::testing::ValuesIn(cacheFiles()),
                         [](const auto& param_info) { return test::testNameOf(param_info.param.label); });

// A sample copied into a folder of the test's own, so that it can be changed.
struct Copied {
  fs::path folder, file;
  explicit Copied(const std::string& name) : folder(freshFolder(name)), file(folder / "trace.pickle") {
    std::vector<fs::path> samples;
    for (const auto& f : test::sampleTraceFiles()) samples.push_back(f.path);
    fs::copy_file(samples.at(0), file);
  }
  ~Copied() { fs::remove_all(folder); }
  [[nodiscard]] fs::path cache() const { return folder / "cache"; }
};

std::uint64_t loadsOf(const fs::path& file, const ReadOptions& options) {
  const auto before = snapshotCacheCounts().loaded;
  const auto snap = readSnapshotFile(file.string(), options);
  EXPECT_TRUE(snap.ok()) << snap.message();
  return snapshotCacheCounts().loaded - before;
}

TEST(SnapshotCache, AFileWrittenAgainIsReadAgain) {
  Copied c("rewritten");
  const ReadOptions o = cachedIn(c.cache());
  EXPECT_EQ(loadsOf(c.file, o), 0u);
  EXPECT_EQ(loadsOf(c.file, o), 1u);
  // The same bytes written again: its times change, so the entry is not this file's any more.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::string bytes = [&] {
    std::ifstream in(c.file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  std::ofstream(c.file, std::ios::binary | std::ios::trunc) << bytes;
  EXPECT_EQ(loadsOf(c.file, o), 0u);
  EXPECT_EQ(loadsOf(c.file, o), 1u);
}

TEST(SnapshotCache, OtherLimitsAreAnotherRead) {
  Copied c("limits");
  ReadOptions o = cachedIn(c.cache());
  EXPECT_EQ(loadsOf(c.file, o), 0u);
  o.limits.memory_cap_bytes = 1ull << 40;
  EXPECT_EQ(loadsOf(c.file, o), 0u);  // a tighter cap could refuse what the other read made
  EXPECT_EQ(loadsOf(c.file, o), 1u);
}

TEST(SnapshotCache, AFileChangedLatelyOrSmallIsNotKept) {
  Copied c("settle");
  ReadOptions o = cachedIn(c.cache());
  o.cache->settle_ns = 3600ll * 1'000'000'000;  // the copy was made less than an hour ago
  EXPECT_EQ(loadsOf(c.file, o), 0u);
  EXPECT_EQ(loadsOf(c.file, o), 0u);
  o = cachedIn(c.cache());
  o.cache->min_file_bytes = fs::file_size(c.file) + 1;
  EXPECT_EQ(loadsOf(c.file, o), 0u);
  EXPECT_EQ(loadsOf(c.file, o), 0u);
  EXPECT_FALSE(fs::exists(c.cache())) << "nothing should have been written";
}

TEST(SnapshotCache, ADamagedEntryIsPassedOverAndTheFileRead) {
  Copied c("damaged");
  const ReadOptions o = cachedIn(c.cache());
  const auto parsed = readSnapshotFile(c.file.string(), ReadOptions{});
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(loadsOf(c.file, o), 0u);
  const fs::path entry = entriesIn(c.cache()).at(0);
  std::string good;
  {
    std::ifstream in(entry, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    std::string bad = good;
    if (trial % 4 == 3) {
      bad.resize(rng() % bad.size());  // cut short
    } else {
      bad[rng() % bad.size()] ^= static_cast<char>(1u << (rng() % 8));  // one bit changed
    }
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << bad;
    const auto before = snapshotCacheCounts().loaded;
    const auto snap = readSnapshotFile(c.file.string(), o);
    ASSERT_TRUE(snap.ok()) << snap.message();
    EXPECT_EQ(snapshotCacheCounts().loaded, before) << "a damaged entry was used (trial " << trial << ")";
    expectSameRead(*parsed, *snap);
  }
  std::ofstream(entry, std::ios::binary | std::ios::trunc) << good;
  EXPECT_EQ(loadsOf(c.file, o), 1u);
}

TEST(SnapshotCache, TheLeastRecentlyUsedEntriesGoFirst) {
  Copied a("trim-a");
  Copied b("trim-b");
  const fs::path folder = freshFolder("trim");
  ReadOptions o = cachedIn(folder);
  EXPECT_EQ(loadsOf(a.file, o), 0u);
  const std::uint64_t one = fs::file_size(entriesIn(folder).at(0));
  o.cache->max_folder_bytes = one;  // room for one entry (b's is as large as a's)
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(loadsOf(b.file, o), 0u);
  EXPECT_EQ(entriesIn(folder).size(), 1u);
  EXPECT_EQ(loadsOf(b.file, o), 1u) << "the newer entry should stay";
  EXPECT_EQ(loadsOf(a.file, o), 0u) << "the older entry should have gone";
  fs::remove_all(folder);
}

TEST(SnapshotCache, EntriesUsedLatelyAreNotPushedOut) {
  Copied a("churn-a");
  Copied b("churn-b");
  const fs::path folder = freshFolder("churn");
  ReadOptions o = cachedIn(folder);
  o.cache->keep_used_ns = 3600ll * 1'000'000'000;
  EXPECT_EQ(loadsOf(a.file, o), 0u);
  o.cache->max_folder_bytes = fs::file_size(entriesIn(folder).at(0));
  EXPECT_EQ(loadsOf(b.file, o), 0u);
  EXPECT_EQ(loadsOf(b.file, o), 0u) << "b's entry would have pushed out a's, used a moment ago";
  EXPECT_EQ(loadsOf(a.file, o), 1u);
  EXPECT_EQ(entriesIn(folder).size(), 1u);
  fs::remove_all(folder);
}

TEST(SnapshotCache, AFolderOthersCanWriteToIsNotUsed) {
  Copied c("shared");
  fs::create_directories(c.cache());
  fs::permissions(c.cache(), fs::perms::others_write | fs::perms::others_exec, fs::perm_options::add);
  const ReadOptions o = cachedIn(c.cache());
  EXPECT_EQ(loadsOf(c.file, o), 0u);
  EXPECT_EQ(loadsOf(c.file, o), 0u);
  EXPECT_TRUE(entriesIn(c.cache()).empty()) << "an entry was written where others can write";
  EXPECT_EQ((fs::status(c.cache()).permissions() & fs::perms::others_write), fs::perms::others_write)
      << "the folder's permissions are the user's to set";
  fs::permissions(c.cache(), fs::perms::others_write, fs::perm_options::remove);
  EXPECT_EQ(loadsOf(c.file, o), 0u);
  EXPECT_EQ(loadsOf(c.file, o), 1u);
}

TEST(SnapshotCache, AFolderItMakesIsTheUsersAlone) {
  Copied c("made");
  const fs::path folder = c.cache() / "a" / "b";
  EXPECT_EQ(loadsOf(c.file, cachedIn(folder)), 0u);
  ASSERT_EQ(entriesIn(folder).size(), 1u);
  EXPECT_EQ(fs::status(folder).permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_EQ(fs::status(entriesIn(folder).at(0)).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
}

}  // namespace
}  // namespace reservoir::traces
