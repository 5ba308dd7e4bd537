#include "python_tool.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "test_paths.h"

namespace reservoir::test {
namespace {

std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

int exitStatus(int raw) { return raw != -1 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1; }

}  // namespace

bool pythonAvailable() {
  static const bool available = exitStatus(std::system("python3 -c 'import pickle' >/dev/null 2>&1")) == 0;
  return available;
}

std::filesystem::path freshTempDir(const std::string& name) {
  static std::atomic<int> counter{0};
  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   ("reservoir-" + name + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

int runPickleTool(const std::vector<std::string>& args, std::string* output) {
  const auto out_file = freshTempDir("python-out") / "output.txt";
  const auto tool = std::filesystem::path(RESERVOIR_SOURCE_DIR) / "tests" / "traces" / "pickle_tool.py";
  std::string cmd = "python3 " + shellQuote(tool.string());
  for (const std::string& a : args) cmd += " " + shellQuote(a);
  cmd += " >" + shellQuote(out_file.string()) + " 2>&1";
  const int status = exitStatus(std::system(cmd.c_str()));
  std::ifstream in(out_file);
  std::ostringstream text;
  text << in.rdbuf();
  if (output) *output = text.str();
  std::filesystem::remove_all(out_file.parent_path());
  return status;
}

}  // namespace reservoir::test
