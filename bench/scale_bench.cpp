// reservoir scale on a million-event program: two inputs (world 2 and world 4; every request of
// the world-4 input is half the world-2 one, an FSDP2 shard law) and the target world 8 scaled,
// synthesized and replayed. BM_ScaleEndToEnd prepares the inputs too (one `reservoir scale`
// call); BM_ScaleTarget is the cost of each further target of a grid (inputs prepared once).
#include <benchmark/benchmark.h>

#include "reservoir/replay/backend.h"
#include "reservoir/replay/export.h"
#include "reservoir/replay/scale.h"
#include "reservoir/replay/whatif.h"

namespace {

using namespace reservoir;
namespace scale = replay::scale;

struct Inputs {
  std::shared_ptr<const traces::Snapshot> world2, world4;
};

// The world-4 capture of the synthetic program: its requests halved, recorded through the model.
std::shared_ptr<const traces::Snapshot> halved(std::shared_ptr<const traces::Snapshot> snap) {
  auto p = replay::prepareTrace(std::move(snap), 0, {});
  if (!p) std::abort();
  replay::PreparedTrace q = *p;
  for (auto& op : q.program.ops)
    if (op.kind == replay::OpKind::kMalloc) op.size = (op.size + 1) / 2;
  q.recorded_segments_by_size.clear();
  replay::RunSettings s;
  s.config = q.recorded_config;
  s.address_model = replay::AddressModel::kDriver;
  auto out = replay::exportRun(q, {}, s);
  if (!out) std::abort();
  return std::make_shared<const traces::Snapshot>(std::move(*out));
}

const Inputs& inputs() {
  static const auto* in = [] {
    replay::SynthOptions o;
    o.events = 1'000'000;
    o.seed = 11;
    auto synth = replay::synthesizeTrace(o);
    if (!synth) std::abort();
    auto* out = new Inputs{std::make_shared<const traces::Snapshot>(std::move(synth->snapshot)), {}};
    out->world4 = halved(out->world2);
    return out;
  }();
  return *in;
}

std::vector<scale::Input> scaleInputs() {
  const auto& in = inputs();
  return {{in.world2, 0, {}, {{"world", 2}}, "world2"}, {in.world4, 0, {}, {{"world", 4}}, "world4"}};
}

void replayTarget(const scale::Scaler& scaler, benchmark::State& state) {
  auto model = scaler.fit({{"world", 8}});
  if (!model) return state.SkipWithError(model.message().c_str());
  auto trace = scaler.synthesize(*model);
  if (!trace) return state.SkipWithError(trace.message().c_str());
  auto rep = replay::runWhatIf(trace->snapshot, trace->device_index, trace->env, {});
  if (!rep) return state.SkipWithError(rep.message().c_str());
  state.counters["events"] = static_cast<double>(trace->snapshot->devices[trace->device_index].events.size());
  benchmark::DoNotOptimize(rep->baseline.peak_reserved.bytes);
}

void BM_ScaleEndToEnd(benchmark::State& state) {
  const auto in = scaleInputs();
  for (auto _ : state) {
    auto scaler = scale::Scaler::create(in);
    if (!scaler) return state.SkipWithError(scaler.message().c_str());
    replayTarget(*scaler, state);
  }
}
BENCHMARK(BM_ScaleEndToEnd)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

void BM_ScaleTarget(benchmark::State& state) {
  auto scaler = scale::Scaler::create(scaleInputs());
  if (!scaler) return state.SkipWithError(scaler.message().c_str());
  for (auto _ : state) replayTarget(*scaler, state);
}
BENCHMARK(BM_ScaleTarget)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
