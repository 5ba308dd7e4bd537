// For the GUI benchmarks that need the whole window (a TraceDocument, its pages): the trace
// opened in a MainWindow, offscreen, once per process, and a main() that makes the QApplication
// (and closes the window before it goes).
#pragma once

#include <QApplication>

#include <memory>
#include <string>

#include "app/screenshot.h"
#include "bench_common.h"
#include "widgets/main_window.h"

namespace reservoir::bench {

struct OpenedWindow {
  std::unique_ptr<gui::MainWindow> window;
  bool ready = false;
};
inline OpenedWindow& openedWindowHolder() {
  static OpenedWindow w;
  return w;
}

// The window with `trace` opened and modelled (null when it did not load in time).
inline gui::MainWindow* openedWindow(const std::string& trace) {
  OpenedWindow& w = openedWindowHolder();
  if (!w.window) {
    w.window = std::make_unique<gui::MainWindow>();
    w.window->setBatchMode(true);
    w.window->resize(1600, 1000);
    w.window->openFiles({QString::fromStdString(trace)});
    w.window->show();
    w.ready = gui::waitUntilIdle(*w.window, 600000);
  }
  return w.ready ? w.window.get() : nullptr;
}

// main(): offscreen unless QT_QPA_PLATFORM says otherwise; `--trace FILE` as runWithTrace takes it.
inline int runGuiWithTrace(int argc, char** argv, std::string& trace) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  const int rc = runWithTrace(argc, argv, trace);
  openedWindowHolder().window.reset();
  return rc;
}

}  // namespace reservoir::bench
