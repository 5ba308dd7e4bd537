// The sweep dialog from Start to its ranked table: the library's sweep (in a worker thread) and
// the table's rows as they arrive and once more ranked, against the library's own time for the
// sweep (SweepReport::seconds). The difference is what the dialog costs.
//   bench_gui_sweep_dialog [--trace FILE]
#include <benchmark/benchmark.h>

#include <QApplication>
#include <QElapsedTimer>

#include <memory>
#include <string>

#include "app/screenshot.h"
#include "app/trace_document.h"
#include "bench_common.h"
#include "widgets/main_window.h"
#include "widgets/sweep_dialog.h"

namespace {

using namespace reservoir;
using namespace reservoir::gui;

std::string g_trace;
std::unique_ptr<MainWindow> g_window;

TraceDocument* document() {
  if (!g_window) {
    g_window = std::make_unique<MainWindow>();
    g_window->setBatchMode(true);
    g_window->resize(1600, 1000);
    g_window->openFiles({QString::fromStdString(g_trace)});
    g_window->show();
    if (!waitUntilIdle(*g_window, 600000)) return nullptr;
  }
  return g_window->documents().empty() ? nullptr : g_window->documents()[0];
}

void BM_SweepDialogToRankedTable(benchmark::State& state) {
  TraceDocument* doc = document();
  if (!doc || !doc->isModelled()) {
    state.SkipWithError("cannot load the trace");
    return;
  }
  SweepDialog dialog(doc);
  dialog.resize(1200, 560);
  dialog.show();
  double library = 0;
  for (auto _ : state) {
    dialog.start();
    while (dialog.running()) QApplication::processEvents(QEventLoop::AllEvents, 5);
    QApplication::processEvents();
    if (!dialog.report()) {
      state.SkipWithError("the sweep failed");
      return;
    }
    library += dialog.report()->seconds;
  }
  state.counters["library_s"] = library / static_cast<double>(state.iterations());
  state.counters["rows"] = static_cast<double>(dialog.report()->candidates.size());
}
BENCHMARK(BM_SweepDialogToRankedTable)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  const int rc = reservoir::bench::runWithTrace(argc, argv, g_trace);
  g_window.reset();
  return rc;
}
