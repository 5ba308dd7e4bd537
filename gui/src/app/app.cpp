#include "app/app.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QScreen>
#include <QTimer>

#include <cstdio>

#include "app/options.h"
#include "app/screenshot.h"
#include "app/trace_document.h"
#include "reservoir/replay/option_text.h"
#include "widgets/main_window.h"
#include "widgets/trace_widget.h"
#include "widgets/whatif_panel.h"

namespace reservoir::gui {

int runApp(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("reservoir-gui"));
  QApplication::setOrganizationName(QStringLiteral("Reservoir"));
  QString error;
  const auto options = parseAppOptions(QApplication::arguments(), &error);
  if (!options) {
    std::fprintf(stderr, "%s\n", qPrintable(error));
    return error.startsWith(QLatin1String("Usage")) ? 0 : 2;
  }
  // RESERVOIR_MAX_MEMORY raises the reader's memory cap, as for the CLI and Python.
  if (Status st = replay::applyMemoryCapFromEnvironment(); !st.ok()) {
    std::fprintf(stderr, "reservoir-gui: %s\n", st.message().c_str());
    return 2;
  }
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
  return QApplication::exec();
}

}  // namespace reservoir::gui
