// `reservoir info` end to end (read, summarize, peaks with their stacks, JSON out), and each of
// its stages alone on a trace already read: where the time of the command goes. Compare with
// Python's pickle.load on the same file with bench/compare_python.sh (docs/performance.md).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <sstream>

#include "bench_common.h"
#include "cli.h"
#include "reservoir/replay/summary.h"
#include "reservoir/traces/reader.h"
#include "reservoir/traces/request_stream.h"
#include "reservoir/traces/window_start.h"

namespace {

std::string g_trace;

void setBytes(benchmark::State& state) {
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(std::filesystem::file_size(g_trace)));
  state.SetLabel(g_trace);
}

// What the user runs: `reservoir info TRACE --json --no-capture-json`, in process.
void BM_InfoEndToEnd(benchmark::State& state) {
  const char* argv[] = {"reservoir", "info", g_trace.c_str(), "--json", "--no-capture-json"};
  for (auto _ : state) {
    std::ostringstream out, err;
    const int rc = reservoir::cli::runCli(5, argv, out, err);
    if (rc != 0) {
      state.SkipWithError(err.str().c_str());
      return;
    }
    benchmark::DoNotOptimize(out.str().size());
  }
  setBytes(state);
}
BENCHMARK(BM_InfoEndToEnd)->Unit(benchmark::kMillisecond)->UseRealTime();

// The stages, each on a snapshot read once outside the timed loop (busiest device).
struct Loaded {
  reservoir::traces::Snapshot snap;
  std::size_t device = 0;
};

const Loaded& loaded() {
  static const Loaded l = [] {
    Loaded x;
    auto snap = reservoir::traces::readSnapshotFile(g_trace);
    if (snap) {
      x.snap = std::move(*snap);
      x.device = x.snap.busiestDevice();
    }
    return x;
  }();
  return l;
}

void BM_StageRead(benchmark::State& state) {
  for (auto _ : state) {
    auto snap = reservoir::traces::readSnapshotFile(g_trace);
    if (!snap) {
      state.SkipWithError(snap.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(snap->segments.data());
  }
  setBytes(state);
}
BENCHMARK(BM_StageRead)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_StageRequestStream(benchmark::State& state) {
  const Loaded& l = loaded();
  if (l.snap.devices.empty()) return state.SkipWithError("no device trace");
  for (auto _ : state) {
    auto r = reservoir::traces::buildRequestStream(l.snap.devices[l.device], l.snap.extras);
    benchmark::DoNotOptimize(r.allocations.data());
  }
}
BENCHMARK(BM_StageRequestStream)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_StageWindowStart(benchmark::State& state) {
  const Loaded& l = loaded();
  if (l.snap.devices.empty()) return state.SkipWithError("no device trace");
  const auto requests = reservoir::traces::buildRequestStream(l.snap.devices[l.device], l.snap.extras);
  for (auto _ : state) {
    auto w = reservoir::traces::rebuildWindowStart(l.snap, l.device, requests);
    benchmark::DoNotOptimize(w.ok());
  }
}
BENCHMARK(BM_StageWindowStart)->Unit(benchmark::kMillisecond)->UseRealTime();

// summarizeDevice: request stream, window start, recorded reserved peak, modelled allocated peak.
void BM_StageSummary(benchmark::State& state) {
  const Loaded& l = loaded();
  if (l.snap.devices.empty()) return state.SkipWithError("no device trace");
  for (auto _ : state) {
    auto s = reservoir::replay::summarizeDevice(l.snap, l.device, reservoir::replay::ReplayEnvironment{});
    benchmark::DoNotOptimize(s.peak_allocated.bytes);
  }
}
BENCHMARK(BM_StageSummary)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) { return reservoir::bench::runWithTrace(argc, argv, g_trace); }
