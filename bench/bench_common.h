// Inputs for the benchmarks: a trace named by an environment variable, or a bundled sample.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace reservoir::bench {

inline std::string traceFromEnv(const char* var, const char* fallback_relative) {
  if (const char* v = std::getenv(var); v && *v) return v;
  return (std::filesystem::path(RESERVOIR_SOURCE_DIR) / fallback_relative).string();
}

}  // namespace reservoir::bench
