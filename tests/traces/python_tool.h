// Running tests/traces/pickle_tool.py: Python's own pickle as the reference.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace reservoir::test {

// True when python3 is on PATH and imports pickle.
bool pythonAvailable();
// Runs pickle_tool.py with `args`; returns its exit status, `output` gets stdout+stderr.
int runPickleTool(const std::vector<std::string>& args, std::string* output);
// A new empty folder under the test's temporary folder.
std::filesystem::path freshTempDir(const std::string& name);

}  // namespace reservoir::test

// Skips the current test when python3 is missing.
#define RESERVOIR_REQUIRE_PYTHON()                                                                \
  do {                                                                                            \
    if (!::reservoir::test::pythonAvailable())                                                    \
      GTEST_SKIP() << "python3 is not available: the comparison with Python's pickle is skipped"; \
  } while (0)
