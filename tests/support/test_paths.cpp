#include "test_paths.h"

namespace reservoir::test {

std::filesystem::path sharedTracesDir() {
  std::filesystem::path p(RESERVOIR_SHARED_TRACES_DIR);
  std::error_code ec;
  if (std::filesystem::exists(p / "MANIFEST.json", ec)) return std::filesystem::canonical(p, ec);
  return {};
}

std::filesystem::path samplesDir() { return std::filesystem::path(RESERVOIR_SOURCE_DIR) / "traces" / "samples"; }

std::filesystem::path testDataDir() { return std::filesystem::path(RESERVOIR_TEST_DATA_DIR); }

std::filesystem::path sharedTrace(const std::string& relative) {
  auto dir = sharedTracesDir();
  return dir.empty() ? dir : dir / relative;
}

}  // namespace reservoir::test
