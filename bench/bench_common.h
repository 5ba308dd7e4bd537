// Inputs for the benchmarks: a trace named by an environment variable, or a bundled sample.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace reservoir::bench {

inline std::string traceFromEnv(const char* var, const char* fallback_relative) {
  if (const char* v = std::getenv(var); v && *v) return v;
  return (std::filesystem::path(RESERVOIR_SOURCE_DIR) / fallback_relative).string();
}

// main() of a benchmark that takes a trace: `--trace FILE` (else $RESERVOIR_BENCH_TRACE, else
// the bundled resume-tiny sample) goes to `trace`; the other arguments to Google Benchmark.
inline int runWithTrace(int argc, char** argv, std::string& trace) {
  trace = traceFromEnv("RESERVOIR_BENCH_TRACE", "traces/samples/resume-tiny/resume-main.rank0.pickle");
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--trace") == 0 && i + 1 < argc) {
      trace = argv[++i];
      continue;
    }
    args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace reservoir::bench
