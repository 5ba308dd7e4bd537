// Drawing the memory timeline: building one frame (column envelopes of every curve, the
// live-block bands with every byte accounted for, their raster) for full, zoomed and
// panned views, in event and time mode; plus the painting of the frame into an image, and the
// bands' colouring done once per trace at load.
//   bench_gui_draw [--trace FILE]
#include <benchmark/benchmark.h>

#include <QGuiApplication>
#include <QImage>
#include <QPainter>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "app/plot_data.h"
#include "bench_common.h"
#include "plot/timeline_frame.h"
#include "widgets/timeline_paint.h"

namespace {

using namespace reservoir;
using namespace reservoir::gui;

std::string g_trace;
std::shared_ptr<const RecordedPlot> g_rec;
std::shared_ptr<const ModelPlot> g_model;

void load() {
  if (g_rec) return;
  auto loaded = replay::loadTraceFile(g_trace, std::nullopt, nullptr, {});
  if (!loaded) return;
  std::shared_ptr<const replay::LoadStage> shared = std::move(*loaded);
  g_rec = makeRecordedPlot(shared);
  auto model = replay::buildModelStage(*shared, replay::kDefaultCheckpointEvery, nullptr, {});
  if (model) {
    g_model = makeModelPlot(std::shared_ptr<const replay::ModelStage>(std::move(*model)));
  }
}

constexpr int kWidth = 1500, kHeight = 420;

// state.range(0): visible fraction in 1/1000 of the trace; range(1): 1 = time axis.
void BM_TimelineFrame(benchmark::State& state) {
  load();
  if (!g_rec) {
    state.SkipWithError("cannot load the trace");
    return;
  }
  const bool time = state.range(1) == 1;
  const Axis full = fullXAxis(*g_rec, time, kWidth);
  const double width = (full.d1 - full.d0) * static_cast<double>(state.range(0)) / 1000.0;
  double start = full.d0;
  std::size_t spans = 0;
  for (auto _ : state) {
    TimelineRequest req;
    req.x = Axis{start, start + width, 0, kWidth};
    req.time_axis = time;
    req.width = kWidth;
    req.height = kHeight;
    auto frame = buildTimelineFrame(req, *g_rec, g_model.get(), nullptr);
    spans = frame.bands.spans.size();
    benchmark::DoNotOptimize(frame);
    // Pan by a tenth of the view each frame (wrapping), as a drag does.
    start += width / 10;
    if (start + width > full.d1) start = full.d0;
  }
  state.counters["events"] = static_cast<double>(g_rec->events());
  state.counters["band_spans"] = static_cast<double>(spans);
}

// The whole repaint: frame + painting it (axes, curves, bands, markers) into an image.
void BM_TimelineRepaint(benchmark::State& state) {
  load();
  if (!g_rec) {
    state.SkipWithError("cannot load the trace");
    return;
  }
  const Axis full = fullXAxis(*g_rec, false, kWidth);
  const double width = (full.d1 - full.d0) * static_cast<double>(state.range(0)) / 1000.0;
  QImage image(kWidth + 100, kHeight + 90, QImage::Format_ARGB32_Premultiplied);
  double start = full.d0;
  for (auto _ : state) {
    TimelineRequest req;
    req.x = Axis{start, start + width, 0, kWidth};
    req.width = kWidth;
    req.height = kHeight;
    auto frame = buildTimelineFrame(req, *g_rec, g_model.get(), nullptr);
    QPainter p(&image);
    TimelineDecor d;
    d.peak_event = g_rec->trace->series.peak_reserved_event;
    d.peak_bytes = g_rec->trace->series.peak_reserved;
    paintTimeline(p, QRect(78, 40, kWidth, kHeight), frame, *g_rec, d);
    start += width / 10;
    if (start + width > full.d1) start = full.d0;
  }
}

// Painting alone: one full-view frame, painted again and again (what a resize or a cursor
// move costs when the frame is reused).
void BM_TimelinePaintOnly(benchmark::State& state) {
  load();
  if (!g_rec) {
    state.SkipWithError("cannot load the trace");
    return;
  }
  TimelineRequest req;
  req.x = fullXAxis(*g_rec, false, kWidth);
  req.width = kWidth;
  req.height = kHeight;
  const auto frame = buildTimelineFrame(req, *g_rec, g_model.get(), nullptr);
  QImage image(kWidth + 100, kHeight + 90, QImage::Format_ARGB32_Premultiplied);
  for (auto _ : state) {
    QPainter p(&image);
    TimelineDecor d;
    d.peak_event = g_rec->trace->series.peak_reserved_event;
    d.peak_bytes = g_rec->trace->series.peak_reserved;
    paintTimeline(p, QRect(78, 40, kWidth, kHeight), frame, *g_rec, d);
  }
}

// Colouring the bands (at load, once per trace): which stacks' blocks touch in the stack of live
// blocks at three scales, then a greedy colouring of the stacks.
void BM_StackColours(benchmark::State& state) {
  load();
  if (!g_rec) {
    state.SkipWithError("cannot load the trace");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(stackColours(*g_rec));
  state.counters["allocations"] = static_cast<double>(g_rec->trace->lifetimes.count());
  state.counters["stacks"] = static_cast<double>(g_rec->stack_colour.size());
}

}  // namespace

BENCHMARK(BM_TimelinePaintOnly)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StackColours)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TimelineFrame)->ArgsProduct({{1000, 100, 10, 1}, {0, 1}})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TimelineRepaint)->Arg(1000)->Arg(100)->Arg(1)->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication app(argc, argv);
  return reservoir::bench::runWithTrace(argc, argv, g_trace);
}
