// Painting the segment timeline (every reserved range over events, with the blocks in it in
// their stack's colour): the whole trace in view, and zoomed to a thousandth of it. The widget
// is rendered offscreen into an image, as a repaint does; its history is built once, before.
//   bench_gui_segment_timeline [--trace FILE]
#include <benchmark/benchmark.h>

#include <QImage>

#include <string>

#include "bench_gui_window.h"
#include "widgets/segment_timeline.h"
#include "widgets/trace_widget.h"

namespace {

using namespace reservoir;
using namespace reservoir::gui;

std::string g_trace;

SegmentTimelineView* view() {
  MainWindow* window = bench::openedWindow(g_trace);
  auto* page = window ? window->traceWidget(0) : nullptr;
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

int main(int argc, char** argv) { return reservoir::bench::runGuiWithTrace(argc, argv, g_trace); }
