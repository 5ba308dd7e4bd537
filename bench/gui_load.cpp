// Loading a trace for the GUI: reading, stage 1 (first view), stage 2 (the model), with the
// process's peak resident memory against the file's size.
//   bench_gui_load [--trace FILE] [--benchmark_filter=...]
// Default trace: $RESERVOIR_BENCH_TRACE, else the bundled resume-tiny sample.
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <QGuiApplication>

#include "app/plot_data.h"
#include "bench_common.h"
#include "plot/timeline_frame.h"
#include "reservoir/replay/session.h"
#include "reservoir/traces/reader.h"

namespace {

std::string g_trace;

double peakRssBytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0;
}

// Resident memory now (not the peak), from /proc/self/statm.
double currentRssBytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long size = 0, resident = 0;
  const int n = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  return n == 2 ? static_cast<double>(resident) * 4096.0 : 0.0;
}

void setMemoryCounters(benchmark::State& state) {
  const auto file = static_cast<double>(std::filesystem::file_size(g_trace));
  state.counters["file_MB"] = file / 1e6;
  state.counters["peak_rss_MB"] = peakRssBytes() / 1e6;
  state.counters["rss_over_file"] = peakRssBytes() / file;
}

// Open -> first view: read the pickle, build the per-event series (stage 1), the plot's
// level-of-detail pyramids and the first timeline frame (what the window shows first).
void BM_FirstView(benchmark::State& state) {
  for (auto _ : state) {
    auto loaded = reservoir::replay::loadTraceFile(g_trace, std::nullopt, nullptr, {});
    if (!loaded) {
      state.SkipWithError(loaded.message().c_str());
      return;
    }
    auto plot =
        reservoir::gui::makeRecordedPlot(std::shared_ptr<const reservoir::replay::LoadStage>(std::move(*loaded)));
    reservoir::gui::TimelineRequest req;
    req.width = 1500;
    req.height = 420;
    req.x = reservoir::gui::fullXAxis(*plot, false, req.width);
    auto frame = reservoir::gui::buildTimelineFrame(req, *plot, nullptr, nullptr);
    benchmark::DoNotOptimize(frame);
  }
  setMemoryCounters(state);
}

void BM_ReadOnly(benchmark::State& state) {
  for (auto _ : state) {
    auto snap = reservoir::traces::readSnapshotFile(g_trace);
    benchmark::DoNotOptimize(snap);
  }
}

// Stage 2: conformance replay, state index with checkpoints, call graph.
void BM_ModelStage(benchmark::State& state) {
  auto loaded = reservoir::replay::loadTraceFile(g_trace, std::nullopt, nullptr, {});
  if (!loaded) {
    state.SkipWithError(loaded.message().c_str());
    return;
  }
  for (auto _ : state) {
    auto model = reservoir::replay::buildModelStage(**loaded, reservoir::replay::kDefaultCheckpointEvery, nullptr, {});
    benchmark::DoNotOptimize(model);
  }
  setMemoryCounters(state);
}

// The whole session as the GUI runs it, both stages kept alive (what the GUI holds).
void BM_WholeSessionMemory(benchmark::State& state) {
  for (auto _ : state) {
    auto loaded = reservoir::replay::loadTraceFile(g_trace, std::nullopt, nullptr, {});
    if (!loaded) {
      state.SkipWithError(loaded.message().c_str());
      return;
    }
    reservoir::replay::releaseFreedMemory();
    auto model = reservoir::replay::buildModelStage(**loaded, reservoir::replay::kDefaultCheckpointEvery, nullptr, {});
    reservoir::replay::releaseFreedMemory();
    benchmark::DoNotOptimize(model);
    setMemoryCounters(state);
    state.counters["rss_now_MB"] = currentRssBytes() / 1e6;
    state.counters["rss_now_over_file"] = currentRssBytes() / static_cast<double>(std::filesystem::file_size(g_trace));
  }
}

}  // namespace

BENCHMARK(BM_ReadOnly)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_FirstView)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_ModelStage)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_WholeSessionMemory)->Unit(benchmark::kMillisecond)->Iterations(1);

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication app(argc, argv);
  return reservoir::bench::runWithTrace(argc, argv, g_trace);
}
