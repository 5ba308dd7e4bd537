// Dump folders as rank lists (issue 32): torchtitan's memory_snapshot/iteration_N[_exit]/,
// oom_rankN.pickle, plain *.pickle; ordered by rank number; errors in plain words.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "reservoir/traces/dump_folder.h"

namespace reservoir::traces {
namespace {

namespace fs = std::filesystem;

class DumpFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("reservoir-dump-folder-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void touch(const std::string& rel) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << "x";
  }
  // The file names (not paths) of what the folder gives, in order, and their ranks.
  std::vector<std::string> names(const std::string& rel, std::optional<std::int64_t> iteration = std::nullopt) {
    auto got = snapshotsInFolder((dir_ / rel).string(), iteration);
    EXPECT_TRUE(got.ok()) << got.message();
    std::vector<std::string> out;
    if (!got) return out;
    for (const auto& s : *got) {
      out.push_back(fs::path(s.path).parent_path().filename().string() + "/" + fs::path(s.path).filename().string());
      EXPECT_EQ(s.rank, rankInFileName(s.path)) << s.path;
    }
    return out;
  }
  fs::path dir_;
};

TEST(RankInFileName, TheConventionsOfTheFrameworks) {
  EXPECT_EQ(rankInFileName("a/rank3_memory_snapshot.pickle"), 3);   // torchtitan
  EXPECT_EQ(rankInFileName("oom_rank12.pickle"), 12);               // verl, lmms-engine
  EXPECT_EQ(rankInFileName("run/train.rank0.pickle.zst"), 0);       // reservoir capture
  EXPECT_EQ(rankInFileName("x-rank7.pickle"), 7);
  EXPECT_EQ(rankInFileName("snapshot.pickle"), std::nullopt);       // Megatron's one file
  EXPECT_EQ(rankInFileName("frank3.pickle"), std::nullopt);         // not a word of the name
  EXPECT_EQ(rankInFileName("rank.pickle"), std::nullopt);           // no number
  EXPECT_EQ(rankInFileName("rank3x/ranked.pickle"), std::nullopt);  // the folder does not count
  EXPECT_EQ(rankInFileName("rank12345678901234.pickle"), std::nullopt);  // too long to be a rank
}

// The newest iteration (the highest N, not the last by name; at the same N the _exit dump), its
// ranks by number (10 after 2); from the dump folder, memory_snapshot/ or the iteration itself.
TEST_F(DumpFolderTest, TorchtitanTheNewestIterationByRank) {
  for (const char* it : {"iteration_2", "iteration_10", "iteration_10_exit", "iteration_9"})
    for (const char* r : {"rank10", "rank2", "rank0"})
      touch(std::string("memory_snapshot/") + it + "/" + r + "_memory_snapshot.pickle");
  touch("memory_snapshot/iteration_10_exit/notes.txt");
  const std::vector<std::string> want{"iteration_10_exit/rank0_memory_snapshot.pickle",
                                      "iteration_10_exit/rank2_memory_snapshot.pickle",
                                      "iteration_10_exit/rank10_memory_snapshot.pickle"};
  EXPECT_EQ(names(""), want);
  EXPECT_EQ(names("memory_snapshot"), want);
  EXPECT_EQ(names("memory_snapshot/"), want);
  EXPECT_EQ(names("memory_snapshot/iteration_10_exit"), want);
  EXPECT_EQ(names("", 2).front(), "iteration_2/rank0_memory_snapshot.pickle");
  EXPECT_EQ(names("", 10).front(), "iteration_10/rank0_memory_snapshot.pickle");  // the plain one first
  EXPECT_EQ(names("memory_snapshot/iteration_9", 9).size(), 3u);
  auto missing = snapshotsInFolder(dir_.string(), 7);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.status().isUsage());
  EXPECT_NE(missing.message().find("has no iteration 7 (its iterations: 2, 9, 10, 10_exit)"), std::string::npos)
      << missing.message();
  auto other = snapshotsInFolder((dir_ / "memory_snapshot/iteration_9").string(), 2);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.message().find("is iteration 9, not 2"), std::string::npos) << other.message();
}

TEST_F(DumpFolderTest, OomRankFilesAndPlainPickles) {
  for (const char* f : {"oom_rank11.pickle", "oom_rank3.pickle", "oom_rank0.pickle", "log.txt"}) touch(f);
  EXPECT_EQ(names(""), (std::vector<std::string>{dir_.filename().string() + "/oom_rank0.pickle",
                                                 dir_.filename().string() + "/oom_rank3.pickle",
                                                 dir_.filename().string() + "/oom_rank11.pickle"}));
  // Files without a rank come after those with one, by name; compressed ones count.
  touch("snapshot.pickle");
  touch("a.pickle.zst");
  const auto all = names("");
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[3], dir_.filename().string() + "/a.pickle.zst");
  EXPECT_EQ(all[4], dir_.filename().string() + "/snapshot.pickle");
  // An iteration asked of a folder without iterations.
  auto it = snapshotsInFolder(dir_.string(), 3);
  ASSERT_FALSE(it.ok());
  EXPECT_TRUE(it.status().isUsage());
  EXPECT_NE(it.message().find("has no iteration_N folders"), std::string::npos) << it.message();
}

TEST_F(DumpFolderTest, ErrorsNameTheFolder) {
  auto empty = snapshotsInFolder(dir_.string());
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.message().find(dir_.string() + ": no snapshots in this folder"), std::string::npos)
      << empty.message();
  EXPECT_FALSE(empty.status().isUsage());
  touch("file.pickle");
  auto notdir = snapshotsInFolder((dir_ / "file.pickle").string());
  ASSERT_FALSE(notdir.ok());
  EXPECT_NE(notdir.message().find("not a folder"), std::string::npos) << notdir.message();
  touch("oom_rank1.pickle");
  touch("oom_rank1.pickle.zst");
  auto twice = snapshotsInFolder(dir_.string());
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.message().find("two snapshots of rank 1: oom_rank1.pickle and oom_rank1.pickle.zst"),
            std::string::npos)
      << twice.message();
  // An iteration folder with nothing in it.
  fs::create_directories(dir_ / "memory_snapshot/iteration_4");
  auto bare = snapshotsInFolder(dir_.string());
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.message().find("iteration_4: no snapshots in this folder"), std::string::npos) << bare.message();
}

}  // namespace
}  // namespace reservoir::traces
