#include "app/screenshot.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QPixmap>
#include <QThread>
#include <QTimer>

#include <cstdio>

#include "app/trace_document.h"
#include "widgets/callsites_view.h"
#include "widgets/compare_view.h"
#include "widgets/events_view.h"
#include "widgets/main_window.h"
#include "widgets/state_view.h"
#include "widgets/timeline_view.h"
#include "widgets/trace_widget.h"
#include "widgets/whatif_panel.h"

namespace reservoir::gui {

bool waitUntilIdle(MainWindow& window, int timeout_ms) {
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < timeout_ms) {
    QApplication::processEvents(QEventLoop::AllEvents, 50);
    bool idle = true;
    for (auto* d : window.documents()) idle = idle && !d->busy();
    if (idle) return true;
    QThread::msleep(10);
  }
  return false;
}

namespace {

void moveCursor(TraceDocument& doc, const QString& cursor) {
  if (cursor.isEmpty()) return;
  if (cursor == QLatin1String("peak"))
    doc.jumpToPeak();
  else if (cursor == QLatin1String("end"))
    doc.setCursor(0xfffffffeu);
  else
    doc.setCursor(cursor.toUInt());
}

}  // namespace

void arrangeView(MainWindow& window, const AppOptions& o, bool batch) {
  for (std::size_t i = 0; i < window.documents().size(); ++i) {
    auto* page = window.traceWidget(static_cast<int>(i));
    TraceDocument& doc = *window.documents()[i];
    page->timeline()->setTimeAxis(o.time_axis);
    // The state and call-site views default to the peak, the most telling moment.
    moveCursor(doc, o.cursor.isEmpty() && (o.view == QLatin1String("state") || o.view == QLatin1String("callsites"))
                        ? QStringLiteral("peak")
                        : o.cursor);
    const QStringList z = o.zoom.split(QLatin1Char(':'));
    if (z.size() == 2) page->timeline()->zoomToEvents(z[0].toUInt(), z[1].toUInt());
    if (!o.search.isEmpty()) page->events()->setQuery(o.search);
    page->callSites()->setBottomUp(o.bottom_up);
    page->state()->rebuild();
  }
  // In a picture, the what-if report and the comparison need the width more than the facts do;
  // a window keeps the facts panel where the user has it (View > Trace facts panel).
  if (batch) window.setFactsVisible(o.view != QLatin1String("whatif") && o.view != QLatin1String("compare"));
  if (o.view == QLatin1String("compare")) {
    window.showCompare();
    if (!o.align.isEmpty()) window.compareView()->alignOnAnnotation(o.align);
    return;
  }
  window.showTrace(o.trace_index);
  auto* page = window.traceWidget(o.trace_index);
  if (!page) return;
  using Tab = TraceWidget::Tab;
  if (o.view == QLatin1String("state")) page->showTab(Tab::kState);
  if (o.view == QLatin1String("events")) page->showTab(Tab::kEvents);
  if (o.view == QLatin1String("callsites")) page->showTab(Tab::kCallSites);
  if (o.view == QLatin1String("whatif")) page->showTab(Tab::kWhatIf);
  if (o.view == QLatin1String("segments")) page->showTab(Tab::kSegments);
  // A picture of the timeline gives it most of the height; a window keeps the user's layout.
  if (batch) page->emphasizeTimeline(o.view == QLatin1String("timeline"));
}

void arrangeWhenReady(MainWindow& window, const AppOptions& o) {
  arrangeView(window, o, false);
  auto* poll = new QTimer(&window);
  QElapsedTimer started;
  started.start();
  QObject::connect(poll, &QTimer::timeout, &window, [&window, o, poll, started] {
    bool idle = true;
    for (auto* d : window.documents()) idle = idle && !d->busy();
    if (!idle && started.elapsed() < 600000) return;
    poll->stop();
    poll->deleteLater();
    if (idle) arrangeView(window, o, false);
  });
  poll->start(50);
}

int runBatch(MainWindow& window, const AppOptions& o) {
  window.show();
  if (!waitUntilIdle(window, 600000)) {
    std::fprintf(stderr, "reservoir-gui: timed out waiting for the traces\n");
    return 1;
  }
  if (!window.errors().isEmpty() && window.documents().size() == 1 && !window.documents()[0]->recorded()) return 1;
  if (!o.edits.isEmpty() || !o.settings.isEmpty())
    for (std::size_t i = 0; i < window.documents().size(); ++i)
      window.traceWidget(static_cast<int>(i))->whatIf()->runVariant(o.edits, o.settings);
  waitUntilIdle(window, 600000);
  arrangeView(window, o, true);
  for (int i = 0; i < 5; ++i) QApplication::processEvents();
  int rc = 0;
  if (!o.export_plot.isEmpty() && !window.exportPlot(o.export_plot)) {
    std::fprintf(stderr, "reservoir-gui: cannot write %s\n", qPrintable(o.export_plot));
    rc = 1;
  }
  if (!o.screenshot.isEmpty() && !window.grab().save(o.screenshot)) {
    std::fprintf(stderr, "reservoir-gui: cannot write %s\n", qPrintable(o.screenshot));
    rc = 1;
  }
  for (const auto& e : window.errors()) std::fprintf(stderr, "reservoir-gui: %s\n", qPrintable(e));
  return rc;
}

}  // namespace reservoir::gui
