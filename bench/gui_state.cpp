// Moving the cursor: rebuilding the allocator state at an event (the model's state index,
// then the state view's classification) for events spread over the whole trace.
//   bench_gui_state [--trace FILE]
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_common.h"
#include "models/allocator_state.h"
#include "reservoir/replay/session.h"

namespace {

using namespace reservoir;

std::string g_trace;
std::shared_ptr<const replay::LoadStage> g_loaded;
std::unique_ptr<replay::ModelStage> g_model;

void load() {
  if (g_model) return;
  auto loaded = replay::loadTraceFile(g_trace, std::nullopt, nullptr, {});
  if (!loaded) return;
  g_loaded = std::move(*loaded);
  auto model = replay::buildModelStage(*g_loaded, replay::kDefaultCheckpointEvery, nullptr, {});
  if (model) g_model = std::move(*model);
}

// A random event each iteration (the worst case: no locality with the previous one).
void BM_StateAtRandomEvent(benchmark::State& state) {
  load();
  if (!g_model) {
    state.SkipWithError("cannot load the trace");
    return;
  }
  std::mt19937 rng(1);
  const auto n = static_cast<std::uint32_t>(g_loaded->series.size());
  std::size_t blocks = 0;
  for (auto _ : state) {
    const auto e = static_cast<std::uint32_t>(rng() % n);
    auto st = gui::classifyState(g_model->stateAtEvent(e), e, g_model->prepared.program.reservation_bases);
    blocks = st.blocks.size();
    benchmark::DoNotOptimize(st);
  }
  state.counters["blocks"] = static_cast<double>(blocks);
}

// The next event (stepping the cursor with the keyboard).
void BM_StateNextEvent(benchmark::State& state) {
  load();
  if (!g_model) {
    state.SkipWithError("cannot load the trace");
    return;
  }
  std::uint32_t e = static_cast<std::uint32_t>(g_loaded->series.size() / 2);
  for (auto _ : state) {
    ++e;
    auto st = gui::classifyState(g_model->stateAtEvent(e), e);
    benchmark::DoNotOptimize(st);
  }
}

}  // namespace

BENCHMARK(BM_StateAtRandomEvent)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StateNextEvent)->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) { return reservoir::bench::runWithTrace(argc, argv, g_trace); }
