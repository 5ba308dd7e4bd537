// reservoir-gui's command line.
#pragma once

#include <QSize>
#include <QString>
#include <QStringList>

#include <optional>

namespace reservoir::gui {

struct AppOptions {
  QStringList traces;
  QString screenshot;                         // write the window as PNG and exit
  QString export_plot;                        // write the current plot (PNG/SVG) and exit
  QString view = QStringLiteral("timeline");  // timeline|state|events|callsites|whatif|compare
  QStringList edits;                          // "cleanup POINT", "release SEL@POINT", ...
  QString settings;                           // --set
  QString cursor;                             // an event index, "peak" or "end"
  QString search;                             // the events view's query
  QString zoom;                               // "A:B" events
  QString align;                              // compare: the annotation whose starts align the traces
  bool time_axis = false;
  bool bottom_up = false;
  QSize size{1600, 1000};
  int trace_index = 0;  // which trace's page (--trace-tab)
  bool arranges = false;  // any of the view options above was given
};

// Parses `arguments` (argv as Qt gives it); an error text when they are wrong. For --help and
// --version: no options, the text to print in `error`, and `*informational` set.
std::optional<AppOptions> parseAppOptions(const QStringList& arguments, QString* error, bool* informational = nullptr);

}  // namespace reservoir::gui
