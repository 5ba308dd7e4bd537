// The sweep dialog from Start to its ranked table: the library's sweep (in a worker thread) and
// the table's rows as they arrive and once more ranked, against the library's own time for the
// sweep (SweepReport::seconds). The difference is what the dialog costs.
//   bench_gui_sweep_dialog [--trace FILE]
#include <benchmark/benchmark.h>

#include <string>

#include "app/trace_document.h"
#include "bench_gui_window.h"
#include "widgets/sweep_dialog.h"

namespace {

using namespace reservoir;
using namespace reservoir::gui;

std::string g_trace;

void BM_SweepDialogToRankedTable(benchmark::State& state) {
  MainWindow* window = bench::openedWindow(g_trace);
  TraceDocument* doc = window && !window->documents().empty() ? window->documents()[0] : nullptr;
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

int main(int argc, char** argv) { return reservoir::bench::runGuiWithTrace(argc, argv, g_trace); }
