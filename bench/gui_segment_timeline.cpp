// Painting the segment timeline (every reserved range over events, with the blocks in it in
// their stack's colour): the whole trace in view, and zoomed to a thousandth of it. The widget
// is rendered offscreen into an image, as a repaint does; its history is built once, before.
//   bench_gui_segment_timeline [--trace FILE]
#include <benchmark/benchmark.h>

#include <QApplication>
#include <QImage>

#include <memory>
#include <string>

#include "app/screenshot.h"
#include "bench_common.h"
#include "widgets/main_window.h"
#include "widgets/segment_timeline.h"
#include "widgets/trace_widget.h"

namespace {

using namespace reservoir;
using namespace reservoir::gui;

std::string g_trace;
std::unique_ptr<MainWindow> g_window;

SegmentTimelineView* view() {
  if (!g_window) {
    g_window = std::make_unique<MainWindow>();
    g_window->setBatchMode(true);
    g_window->resize(1600, 1000);
    g_window->openFiles({QString::fromStdString(g_trace)});
    g_window->show();
    if (!waitUntilIdle(*g_window, 600000)) return nullptr;
  }
  auto* page = g_window->traceWidget(0);
  if (!page) return nullptr;
  auto* v = page->segmentTimeline();
  v->resize(1500, 420);
  return v;
}

// state.range(0): visible fraction in 1/1000 of the trace.
void BM_SegmentTimelinePaint(benchmark::State& state) {
  SegmentTimelineView* v = view();
  if (!v) {
    state.SkipWithError("cannot load the trace");
    return;
  }
  v->resetZoom();
  QImage image(v->size(), QImage::Format_ARGB32_Premultiplied);
  v->render(&image);  // builds the history
  if (!v->history()) {
    state.SkipWithError("no segment history");
    return;
  }
  if (state.range(0) < 1000) v->zoomBy(static_cast<double>(state.range(0)) / 1000.0, v->plotArea().width() / 2.0);
  for (auto _ : state) v->render(&image);
  state.counters["blocks"] = static_cast<double>(v->history()->blocks.size());
  state.counters["segments_drawn"] = static_cast<double>(v->lastDrawnSegments());
}
BENCHMARK(BM_SegmentTimelinePaint)->Arg(1000)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  const int rc = reservoir::bench::runWithTrace(argc, argv, g_trace);
  g_window.reset();
  return rc;
}
