// Where tests find their data: the shared real traces (optional), the project's own samples.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace reservoir::test {

// ../shared/traces beside the checkout, or "" when absent.
std::filesystem::path sharedTracesDir();
// traces/samples in the source tree (always present).
std::filesystem::path samplesDir();
// tests/data in the source tree.
std::filesystem::path testDataDir();
// A file under sharedTracesDir(); empty when the shared folder is absent.
std::filesystem::path sharedTrace(const std::string& relative);

}  // namespace reservoir::test

// Skips the current test with a clear message when ../shared/traces is absent.
#define RESERVOIR_REQUIRE_SHARED_TRACES()                                                          \
  do {                                                                                             \
    if (::reservoir::test::sharedTracesDir().empty())                                              \
      GTEST_SKIP() << "../shared/traces is not beside this checkout (" RESERVOIR_SHARED_TRACES_DIR \
                      "): the real-trace tests need it";                                           \
  } while (0)
