// A sweep of 100 candidate cleanup placements (and settings) over one trace, on every core.
#include <benchmark/benchmark.h>

#include "bench_common.h"
#include "reservoir/replay/sweep.h"
#include "reservoir/traces/reader.h"

namespace {

using namespace reservoir;

void BM_Sweep100(benchmark::State& state) {
  auto snap = traces::readSnapshotFile(
      bench::traceFromEnv("RESERVOIR_BENCH_TRACE", "traces/samples/resume-expandable/resume-main.rank0.pickle"));
  if (!snap) {
    state.SkipWithError(snap.message().c_str());
    return;
  }
  const std::size_t dev = snap->busiestDevice();
  auto prepared = replay::prepareTrace(std::make_shared<const traces::Snapshot>(std::move(*snap)), dev, {});
  replay::SweepOptions o;
  o.max_candidates = 100;
  o.jobs = static_cast<unsigned>(state.range(0));
  std::size_t evaluated = 0;
  for (auto _ : state) {
    auto rep = replay::runSweep(*prepared, o);
    evaluated = rep->evaluated;
  }
  state.counters["candidates"] = static_cast<double>(evaluated);
  state.counters["events"] = static_cast<double>(prepared->snapshot->devices[dev].events.size());
}
BENCHMARK(BM_Sweep100)->Arg(1)->Arg(2)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
