// Parsing speed of the snapshot reader (bytes/s of the stored file). Compare with Python's
// pickle.load on the same file with bench/compare_python.sh (docs/performance.md).
#include <benchmark/benchmark.h>

#include <filesystem>

#include "bench_common.h"
#include "reservoir/traces/reader.h"

namespace {

void BM_ReadSnapshot(benchmark::State& state) {
  const std::string path = reservoir::bench::traceFromEnv("RESERVOIR_BENCH_TRACE",
                                                          "traces/samples/resume-expandable/resume-main.rank0.pickle");
  std::size_t events = 0;
  for (auto _ : state) {
    auto snap = reservoir::traces::readSnapshotFile(path);
    if (!snap) {
      state.SkipWithError(snap.message().c_str());
      return;
    }
    events = 0;
    for (const auto& d : snap->devices) events += d.events.size();
    benchmark::DoNotOptimize(snap->segments.data());
  }
  const auto bytes = static_cast<std::int64_t>(std::filesystem::file_size(path));
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["events"] = static_cast<double>(events);
  state.counters["events_per_s"] = benchmark::Counter(
      static_cast<double>(events) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel(path);
}
BENCHMARK(BM_ReadSnapshot)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
