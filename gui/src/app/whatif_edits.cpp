// Edit texts as the what-if panel and the command line give them ("cleanup after:x.py:load").
#include "app/trace_document.h"

#include "reservoir/simulator/alloc_config.h"

namespace reservoir::gui {

Expected<replay::WhatIfOptions> makeWhatIfOptions(const QStringList& edits, const QString& settings) {
  replay::WhatIfOptions o;
  for (const QString& e : edits) {
    const QString text = e.trimmed();
    const auto space = text.indexOf(QLatin1Char(' '));
    const QString kind = space < 0 ? text : text.left(space);
    const std::string arg = space < 0 ? std::string{} : text.mid(space + 1).trimmed().toStdString();
    Expected<replay::Edit> edit =
        Status::error("unknown edit '" + kind.toStdString() + "' (cleanup, release, probe, demand, reset-peaks)");
    if (kind == QLatin1String("cleanup"))
      edit = replay::parseCleanup(arg);
    else if (kind == QLatin1String("release"))
      edit = replay::parseRelease(arg);
    else if (kind == QLatin1String("probe"))
      edit = replay::parseProbe(arg);
    else if (kind == QLatin1String("demand"))
      edit = replay::parseDemand(arg);
    else if (kind == QLatin1String("reset-peaks"))
      edit = replay::parseResetPeaks(arg);
    if (!edit) return Status::error(text.toStdString() + ": " + edit.message());
    o.edits.push_back(std::move(*edit));
  }
  if (!settings.trimmed().isEmpty()) {
    auto cfg = sim::parseAllocConf(settings.trimmed().toStdString());
    if (!cfg) return Status::error("settings: " + cfg.message());
    o.settings = std::move(*cfg);
  }
  return o;
}

}  // namespace reservoir::gui
