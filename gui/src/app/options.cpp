#include "app/options.h"

#include <QCommandLineParser>

#include "reservoir/core/version.h"
#include "reservoir/traces/dump_folder.h"

namespace reservoir::gui {
namespace {

// A dump folder among the traces opens as its ranks (traces::snapshotsInFolder, the command
// line's rule); `iteration` (when not empty) picks a torchtitan iteration.
bool expandFolders(QStringList* traces_in, const QString& iteration, QString* error) {
  std::optional<std::int64_t> it;
  if (!iteration.isEmpty()) {
    bool ok = false;
    const qlonglong n = iteration.toLongLong(&ok);
    if (!ok || n < 0) {
      *error = QStringLiteral("--iteration: a whole number, not '%1'").arg(iteration);
      return false;
    }
    it = n;
  }
  QStringList out;
  bool folder = false;
  for (const QString& t : *traces_in) {
    if (!traces::isFolder(t.toStdString())) {
      out << t;
      continue;
    }
    folder = true;
    auto ranked = traces::snapshotsInFolder(t.toStdString(), it);
    if (!ranked) {
      *error = (it && ranked.status().isUsage() ? QStringLiteral("--iteration: ") : QString()) +
               QString::fromStdString(ranked.message());
      return false;
    }
    for (const auto& r : *ranked) out << QString::fromStdString(r.path);
  }
  if (it && !folder) {
    *error = QStringLiteral("--iteration: it chooses among a dump folder's iterations, and no folder is given");
    return false;
  }
  *traces_in = out;
  return true;
}

}  // namespace

std::optional<AppOptions> parseAppOptions(const QStringList& arguments, QString* error, bool* informational) {
  QCommandLineParser p;
  p.setApplicationDescription(
      QStringLiteral("Reservoir: PyTorch CUDA caching-allocator snapshots, simulated exactly."));
  p.addHelpOption();
  const QCommandLineOption version(QStringList{QStringLiteral("v"), QStringLiteral("version")},
                                   QStringLiteral("Displays version information."));
  p.addOption(version);
  p.addPositionalArgument(QStringLiteral("traces"),
                          QStringLiteral("snapshot pickles or dump folders (several ranks open side by side)"));
  const QCommandLineOption iteration(QStringLiteral("iteration"),
                                     QStringLiteral("of a dump folder (memory_snapshot/iteration_N/): N, not the newest"),
                                     QStringLiteral("N"));
  const QCommandLineOption shot(QStringLiteral("screenshot"), QStringLiteral("write the window to FILE.png and exit"),
                                QStringLiteral("FILE"));
  const QCommandLineOption plot(QStringLiteral("export-plot"),
                                QStringLiteral("write the current plot to FILE (.png/.svg) and exit"),
                                QStringLiteral("FILE"));
  const QCommandLineOption view(QStringLiteral("view"),
                                QStringLiteral("timeline|state|events|callsites|whatif|segments|compare"),
                                QStringLiteral("VIEW"), QStringLiteral("timeline"));
  const QCommandLineOption cleanup(QStringLiteral("cleanup"), QStringLiteral("what-if: empty_cache at POINT"),
                                   QStringLiteral("POINT"));
  const QCommandLineOption release(QStringLiteral("release"),
                                   QStringLiteral("what-if: free SEL's tensors at POINT (SEL@POINT)"),
                                   QStringLiteral("SEL@POINT"));
  const QCommandLineOption probe(QStringLiteral("probe"), QStringLiteral("what-if: report memory at POINT"),
                                 QStringLiteral("POINT"));
  const QCommandLineOption demand(QStringLiteral("demand"),
                                  QStringLiteral("what-if: would BYTES fit at POINT (BYTES@POINT)"),
                                  QStringLiteral("BYTES@POINT"));
  const QCommandLineOption reset(QStringLiteral("reset-peaks"),
                                 QStringLiteral("what-if: reset peak statistics at POINT"), QStringLiteral("POINT"));
  const QCommandLineOption set(QStringLiteral("set"), QStringLiteral("what-if: allocator settings for the edited run"),
                               QStringLiteral("CONF"));
  const QCommandLineOption cursor(QStringLiteral("cursor"),
                                  QStringLiteral("move the cursor to an event, 'peak' or 'end'"),
                                  QStringLiteral("EVENT"));
  const QCommandLineOption search(QStringLiteral("search"), QStringLiteral("search the events view"),
                                  QStringLiteral("QUERY"));
  const QCommandLineOption zoom(QStringLiteral("zoom"), QStringLiteral("zoom the timeline to events A:B"),
                                QStringLiteral("A:B"));
  const QCommandLineOption time(QStringLiteral("time-axis"), QStringLiteral("plot over time instead of events"));
  const QCommandLineOption align(
      QStringLiteral("align"), QStringLiteral("compare: align the traces on the starts of ANNOTATION (ProfilerStep#)"),
      QStringLiteral("ANNOTATION"));
  const QCommandLineOption bottom(QStringLiteral("bottom-up"), QStringLiteral("call sites bottom-up"));
  const QCommandLineOption size(QStringLiteral("size"), QStringLiteral("window size for --screenshot, WxH"),
                                QStringLiteral("WxH"), QStringLiteral("1600x1000"));
  const QCommandLineOption tab(QStringLiteral("trace-tab"), QStringLiteral("which trace's page to show (0-based)"),
                               QStringLiteral("N"), QStringLiteral("0"));
  p.addOptions({shot, plot, view, cleanup, release, probe, demand, reset, set, cursor, search, zoom, time, align,
                bottom, size, tab, iteration});
  if (!p.parse(arguments)) {
    *error = p.errorText();
    return std::nullopt;
  }
  if (p.isSet(QStringLiteral("help")) || p.isSet(QStringLiteral("help-all")) || p.isSet(version)) {
    *error = p.isSet(version) ? QStringLiteral("reservoir-gui " RESERVOIR_VERSION) : p.helpText();
    if (informational) *informational = true;
    return std::nullopt;
  }
  AppOptions o;
  o.traces = p.positionalArguments();
  if (!expandFolders(&o.traces, p.value(iteration), error)) return std::nullopt;
  o.screenshot = p.value(shot);
  o.export_plot = p.value(plot);
  o.view = p.value(view);
  static const QStringList views{QStringLiteral("timeline"),  QStringLiteral("state"),  QStringLiteral("events"),
                                 QStringLiteral("callsites"), QStringLiteral("whatif"), QStringLiteral("segments"),
                                 QStringLiteral("compare")};
  if (!views.contains(o.view)) {
    *error = QStringLiteral("--view: one of %1").arg(views.join(QLatin1Char('|')));
    return std::nullopt;
  }
  for (const auto& [opt, kind] : {std::pair{&cleanup, "cleanup"},
                                  {&release, "release"},
                                  {&probe, "probe"},
                                  {&demand, "demand"},
                                  {&reset, "reset-peaks"}})
    for (const QString& v : p.values(*opt)) o.edits << QString::fromLatin1(kind) + QLatin1Char(' ') + v;
  o.settings = p.value(set);
  o.cursor = p.value(cursor);
  o.search = p.value(search);
  o.zoom = p.value(zoom);
  o.time_axis = p.isSet(time);
  o.align = p.value(align);
  o.bottom_up = p.isSet(bottom);
  const QStringList wh = p.value(size).split(QLatin1Char('x'));
  if (wh.size() != 2 || wh[0].toInt() < 200 || wh[1].toInt() < 200) {
    *error = QStringLiteral("--size: WxH, e.g. 1600x1000");
    return std::nullopt;
  }
  o.size = QSize(wh[0].toInt(), wh[1].toInt());
  o.trace_index = p.value(tab).toInt();
  for (const QCommandLineOption* given : {&view, &cursor, &search, &zoom, &time, &align, &bottom, &tab})
    o.arranges = o.arranges || p.isSet(*given);
  if ((!o.screenshot.isEmpty() || !o.export_plot.isEmpty()) && o.traces.isEmpty()) {
    *error = QStringLiteral("--screenshot and --export-plot need a trace");
    return std::nullopt;
  }
  return o;
}

}  // namespace reservoir::gui
