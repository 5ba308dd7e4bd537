// The parts that load at run time (replay/plugins.h): a GPU backend from its plugin, and what a
// user is told when a plugin is missing, cannot load (what it needs is not installed), or comes
// from another build; and the reservoir binary under an MPI launcher without the MPI driver.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "cli_runner.h"
#include "reservoir/replay/backend.h"
#include "reservoir/replay/plugins.h"
#include "test_paths.h"

namespace reservoir::replay {
namespace {

namespace fs = std::filesystem;

// RESERVOIR_PLUGIN_DIR for the test's lifetime.
class PluginDir {
 public:
  explicit PluginDir(const std::string& dir) {
    if (const char* old = std::getenv("RESERVOIR_PLUGIN_DIR")) old_ = old;
    setenv("RESERVOIR_PLUGIN_DIR", dir.c_str(), 1);
  }
  ~PluginDir() {
    if (old_)
      setenv("RESERVOIR_PLUGIN_DIR", old_->c_str(), 1);
    else
      unsetenv("RESERVOIR_PLUGIN_DIR");
  }
  PluginDir(const PluginDir&) = delete;
  PluginDir& operator=(const PluginDir&) = delete;

 private:
  std::optional<std::string> old_;
};

fs::path emptyDir(const std::string& name) {
  const fs::path d = fs::path(testing::TempDir()) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(Plugins, TheFoldersComeFromTheEnvironmentInOrder) {
  PluginDir env("/a/b::/c");
  EXPECT_EQ(pluginDirectories(), (std::vector<std::string>{"/a/b", "/c"}));
}

TEST(Plugins, WithoutTheEnvironmentTheyAreBesideThisBinaryAndItsInstalledFolder) {
  const char* old = std::getenv("RESERVOIR_PLUGIN_DIR");
  const std::string saved = old ? old : "";
  unsetenv("RESERVOIR_PLUGIN_DIR");
  const auto dirs = pluginDirectories();
  if (old) setenv("RESERVOIR_PLUGIN_DIR", saved.c_str(), 1);
  ASSERT_EQ(dirs.size(), 2U);
  EXPECT_EQ(fs::path(dirs[0]), fs::canonical("/proc/self/exe").parent_path());
  EXPECT_NE(dirs[1].find("lib/reservoir"), std::string::npos) << dirs[1];
}

TEST(Plugins, AMissingBackendIsAUsageErrorThatSaysWhatItNeeds) {
  PluginDir env(emptyDir("no-plugins").string());
  for (const char* name : {"torch", "cuda"}) {
    auto b = makeBackend(name);
    ASSERT_FALSE(b.ok()) << name;
    EXPECT_TRUE(b.status().isUsage()) << b.message();
    EXPECT_NE(b.message().find(std::string("no ") + name + " backend"), std::string::npos) << b.message();
    EXPECT_NE(b.message().find(backendPluginFile(name) + " is not installed"), std::string::npos) << b.message();
  }
  auto torch = makeBackend("torch");
  EXPECT_NE(torch.message().find("LibTorch"), std::string::npos) << torch.message();
  EXPECT_TRUE(makeBackend("model").ok());
}

TEST(Plugins, ABackendPluginLoadsAndMakesTheBackend) {
  PluginDir env(RESERVOIR_FAKE_PLUGIN_DIR);
  auto b = makeBackend("torch");
  ASSERT_TRUE(b.ok()) << b.message();
  EXPECT_EQ((*b)->name(), "fake torch from a plugin");
}

TEST(Plugins, APluginOfAnotherBuildIsRefused) {
  PluginDir env(RESERVOIR_WRONG_BUILD_PLUGIN_DIR);
  PluginProblem why = PluginProblem::kNone;
  auto p = loadPlugin(backendPluginFile("torch"), kBackendPluginEntry, false, &why);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(why, PluginProblem::kWrongBuild);
  EXPECT_NE(p.message().find("made by another build (reservoir 0.0.0-other)"), std::string::npos) << p.message();
  EXPECT_NE(p.message().find(pluginBuildIdentity()), std::string::npos) << p.message();
}

TEST(Plugins, APluginThatCannotLoadSaysWhyInTheLoadersWords) {
  const fs::path dir = emptyDir("broken-plugin");
  std::ofstream(dir / backendPluginFile("cuda")) << "not an ELF file";
  PluginDir env(dir.string());
  auto b = makeBackend("cuda");
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(b.status().isUsage());
  EXPECT_NE(b.message().find("the cuda backend cannot start on this machine: it needs the CUDA runtime (libcudart.so)"),
            std::string::npos)
      << b.message();
  EXPECT_NE(b.message().find("cannot be loaded"), std::string::npos) << b.message();
}

TEST(Plugins, ReplayOnAMissingBackendExitsWithTheUsageCode) {
  PluginDir env(emptyDir("no-plugins-cli").string());
  const auto r = test::runReservoir(
      {"replay", (test::samplesDir() / "resume-tiny/resume-main.rank0.pickle").string(), "--backend", "torch"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("no torch backend"), std::string::npos) << r.err;
}

// The binary itself (main.cpp), as a launcher would start it.
struct BinaryRun {
  int code = -1;
  std::string output;
};

BinaryRun runBinary(const std::string& env, const std::string& args) {
  const fs::path log = fs::path(testing::TempDir()) / "plugins_test_binary.log";
  const std::string binary = env.find("PATH=") != std::string::npos ? "reservoir" : RESERVOIR_BINARY;
  const std::string cmd = env + " " + binary + " " + args + " > " + log.string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

TEST(Plugins, UnderAnMpiLauncherWithoutTheDriverTheBinarySaysSoAndRunsNothing) {
  const std::string trace = (test::samplesDir() / "resume-tiny/resume-main.rank0.pickle").string();
  const std::string dir = emptyDir("no-mpi-plugin").string();
  const BinaryRun r = runBinary("OMPI_COMM_WORLD_SIZE=2 RESERVOIR_PLUGIN_DIR=" + dir, "info " + trace);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("an MPI launcher started this process, but the MPI driver cannot run here"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("RESERVOIR_NO_MPI=1"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("peak reserved"), std::string::npos) << r.output;
  // RESERVOIR_NO_MPI=1: each process runs the command on its own.
  const BinaryRun alone =
      runBinary("OMPI_COMM_WORLD_SIZE=2 RESERVOIR_NO_MPI=1 RESERVOIR_PLUGIN_DIR=" + dir, "info " + trace);
  EXPECT_EQ(alone.code, 0) << alone.output;
}

TEST(Plugins, ABinaryStartedByItsBareNameLooksBesideItself) {
  // A copy of the binary alone in a folder, run as `reservoir` from PATH in another folder: the
  // loader reports argv[0] ("reservoir") as its name, the folder must come from /proc/self/exe.
  const fs::path bin = emptyDir("bare-name-bin");
  fs::copy_file(RESERVOIR_BINARY, bin / "reservoir");
  const std::string trace = (test::samplesDir() / "resume-tiny/resume-main.rank0.pickle").string();
  const BinaryRun r = runBinary("cd / && env -u RESERVOIR_PLUGIN_DIR PATH=" + bin.string() + ":/usr/bin:/bin",
                                "replay " + trace + " --backend torch");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("is not installed (looked in " + fs::canonical(bin).string() + ", "), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace reservoir::replay
