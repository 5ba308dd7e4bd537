// Events per second through the allocator model: the conformance replay (model + recorded
// oracle + event-by-event comparison) and the what-if replay of the same requests, on the
// whole trace and on its first tenth (linearity: ten times the events should cost about ten
// times the time).
#include <benchmark/benchmark.h>

#include "bench_common.h"
#include "reservoir/replay/conformance.h"
#include "reservoir/replay/whatif.h"
#include "reservoir/traces/reader.h"

namespace {

using namespace reservoir;

struct Loaded {
  std::shared_ptr<const traces::Snapshot> snap;
  std::size_t device = 0;
  replay::PreparedTrace prepared;
};

const Loaded& loaded() {
  static const auto l = [] {
    auto snap = traces::readSnapshotFile(
        bench::traceFromEnv("RESERVOIR_BENCH_TRACE", "traces/samples/resume-expandable/resume-main.rank0.pickle"));
    auto* out = new Loaded{std::make_shared<const traces::Snapshot>(std::move(*snap)), 0, {}};
    out->device = out->snap->busiestDevice();
    out->prepared = std::move(*replay::prepareTrace(out->snap, out->device, {}));
    return out;
  }();
  return *l;
}

void BM_Conformance(benchmark::State& state) {
  const auto& l = loaded();
  for (auto _ : state) {
    auto r = replay::runConformance(*l.snap, l.device, {});
    if (!r || !r->exact()) state.SkipWithError("not exact");
  }
  const double events = static_cast<double>(l.snap->devices[l.device].events.size());
  state.counters["events_per_s"] =
      benchmark::Counter(events * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Conformance)->Unit(benchmark::kMillisecond)->UseRealTime();

// state.range(0): percent of the ops replayed.
void BM_WhatIfReplay(benchmark::State& state) {
  const auto& l = loaded();
  const auto& ops = l.prepared.program.ops;
  const std::size_t n = ops.size() * static_cast<std::size_t>(state.range(0)) / 100;
  replay::RunSettings s;
  s.config = l.prepared.recorded_config;
  s.fraction = l.prepared.fraction;
  if (n < ops.size()) s.stop_after_op = static_cast<std::uint32_t>(n ? n - 1 : 0);
  for (auto _ : state) benchmark::DoNotOptimize(replay::replayProgram(l.prepared, {}, s).peak_reserved.bytes);
  const double events = n ? static_cast<double>(ops[n - 1].end_event) : 0.0;
  state.counters["events"] = events;
  state.counters["events_per_s"] =
      benchmark::Counter(events * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_WhatIfReplay)->Arg(10)->Arg(100)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
