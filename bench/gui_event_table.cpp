// The event table following the cursor: the row of a random event made current and scrolled
// into view, as EventsView does on each cursor move. A trace of more than
// EventFilterProxy::kWindowRows events is shown a window of rows at a time (a QTableView keeps 8
// bytes a row in its vertical header), so a jump outside the window resets the table's rows;
// the slide is the scroll bar taken to the window's end.
//   bench_gui_event_table [--trace FILE]
#include <benchmark/benchmark.h>

#include <QHeaderView>
#include <QScrollBar>
#include <QTableView>

#include <limits>
#include <random>
#include <string>

#include "bench_gui_window.h"
#include "models/event_filter_proxy.h"
#include "widgets/events_view.h"
#include "widgets/trace_widget.h"

namespace {

using namespace reservoir;
using namespace reservoir::gui;

std::string g_trace;

EventsView* eventsView() {
  MainWindow* w = bench::openedWindow(g_trace);
  if (!w) return nullptr;
  TraceWidget* page = w->traceWidget(0);
  page->showTab(TraceWidget::Tab::kEvents);
  QApplication::processEvents();
  return page->events();
}

// state.range(0): the window's rows (0: every row, as before the window).
void BM_EventTableFollowsARandomEvent(benchmark::State& state) {
  EventsView* view = eventsView();
  if (!view) {
    state.SkipWithError("cannot open the trace");
    return;
  }
  EventFilterProxy* proxy = view->proxy();
  proxy->setWindowRows(state.range(0) == 0 ? std::numeric_limits<int>::max() : static_cast<int>(state.range(0)));
  QTableView* table = view->table();
  std::mt19937 rng(3);
  const auto n = static_cast<std::uint32_t>(proxy->shownRows());
  for (auto _ : state) {
    const int row = proxy->showRowAtOrAfter(static_cast<int>(rng() % n));
    const QModelIndex i = proxy->index(row, 0);
    table->selectionModel()->setCurrentIndex(i, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    table->scrollTo(i, QAbstractItemView::PositionAtCenter);
    QApplication::processEvents();
  }
  state.counters["events"] = n;
  state.counters["table_rows"] = proxy->rowCount();
  state.counters["header_sections"] = table->verticalHeader()->count();
  proxy->setWindowRows(EventFilterProxy::kWindowRows);
}

void BM_EventTableScrolledToTheWindowsEnd(benchmark::State& state) {
  EventsView* view = eventsView();
  if (!view) {
    state.SkipWithError("cannot open the trace");
    return;
  }
  QScrollBar* bar = view->table()->verticalScrollBar();
  view->proxy()->showRowAtOrAfter(0);
  for (auto _ : state) {
    if (view->proxy()->windowBegin() + static_cast<std::size_t>(view->proxy()->rowCount()) >=
        view->proxy()->shownRows())
      view->proxy()->showRowAtOrAfter(0);  // at the end: start again
    bar->setValue(bar->maximum());
    QApplication::processEvents();
  }
  state.counters["window_begin"] = static_cast<double>(view->proxy()->windowBegin());
}

}  // namespace

BENCHMARK(BM_EventTableFollowsARandomEvent)
    ->Arg(EventFilterProxy::kWindowRows)
    ->Arg(65536)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EventTableScrolledToTheWindowsEnd)->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) { return reservoir::bench::runGuiWithTrace(argc, argv, g_trace); }
