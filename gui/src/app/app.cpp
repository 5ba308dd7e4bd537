#include "app/app.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QScreen>
#include <QTimer>

#include <cstdio>
#include <string>
#include <vector>

#include "app/options.h"
#include "app/platform.h"
#include "app/screenshot.h"
#include "app/trace_document.h"
#include "reservoir/replay/option_text.h"
#include "widgets/main_window.h"
#include "widgets/trace_widget.h"
#include "widgets/whatif_panel.h"

namespace reservoir::gui {

int runApp(int argc, char** argv) {
  switch (choosePlatform(std::vector<std::string>(argv + (argc > 0 ? 1 : 0), argv + argc), platformEnvironment())) {
    case StartPlatform::kOffscreen: qputenv("QT_QPA_PLATFORM", "offscreen"); break;
    case StartPlatform::kNoDisplay: std::fprintf(stderr, "%s\n", noDisplayMessage().c_str()); return 2;
    case StartPlatform::kAsConfigured: break;
  }
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("reservoir-gui"));
  QApplication::setOrganizationName(QStringLiteral("Reservoir"));
  QString error;
  bool informational = false;  // --help, --version
  const auto options = parseAppOptions(QApplication::arguments(), &error, &informational);
  if (!options) {
    std::fprintf(informational ? stdout : stderr, "%s\n", qPrintable(error));
    return informational ? 0 : 2;
  }
  // RESERVOIR_MAX_MEMORY raises the reader's memory cap, as for the CLI and Python.
  if (Status st = replay::applyMemoryCapFromEnvironment(); !st.ok()) {
    std::fprintf(stderr, "reservoir-gui: %s\n", st.message().c_str());
    return 2;
  }
  replay::applySnapshotCacheFromEnvironment();  // RESERVOIR_CACHE, as for the CLI and Python
  MainWindow window;
  const bool batch = !options->screenshot.isEmpty() || !options->export_plot.isEmpty();
  window.setBatchMode(batch);
  const QScreen* screen = QGuiApplication::primaryScreen();
  window.resize(batch || !screen ? options->size : openingSize(options->size, screen->availableGeometry().size()));
  window.openFiles(options->traces);
  if (batch) return runBatch(window, *options);
  window.show();
  if (!options->edits.isEmpty() || !options->settings.isEmpty()) {
    for (std::size_t i = 0; i < window.documents().size(); ++i)
      window.traceWidget(static_cast<int>(i))->whatIf()->runVariant(options->edits, options->settings);
  }
  if (options->arranges) arrangeWhenReady(window, *options);
  return QApplication::exec();
}

}  // namespace reservoir::gui
