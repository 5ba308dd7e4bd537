// Helpers the GUI tests share: waiting for a document's work, and the main window opened on the
// two tiny resume ranks, as most widget tests start.
#pragma once

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QString>
#include <QThread>

#include <memory>

#include "app/screenshot.h"
#include "app/trace_document.h"
#include "test_paths.h"
#include "widgets/main_window.h"

namespace reservoir::gui::test_util {

// Runs the event loop until `doc` has no work left (or `ms` pass); true when it finished.
inline bool waitFor(const TraceDocument& doc, int ms = 120000) {
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < ms && doc.busy()) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(2);
  }
  return !doc.busy();
}

inline QString sample(const char* rel) { return QString::fromStdString((test::samplesDir() / rel).string()); }

// A 1400x900 batch-mode window with resume-tiny's rank 0 and rank 1 open and idle (null if the
// load did not finish in two minutes).
inline std::unique_ptr<MainWindow> openTinyPair() {
  auto window = std::make_unique<MainWindow>();
  window->setBatchMode(true);
  window->resize(1400, 900);
  window->openFiles({sample("resume-tiny/resume-main.rank0.pickle"), sample("resume-tiny/resume-main.rank1.pickle")});
  window->show();
  if (!waitUntilIdle(*window, 120000)) return nullptr;
  return window;
}

}  // namespace reservoir::gui::test_util
