// Edit texts as the what-if panel and the command line give them ("cleanup after:x.py:load").
#include "app/trace_document.h"

#include "reservoir/simulator/alloc_config.h"

namespace reservoir::gui {

Expected<replay::WhatIfOptions> makeWhatIfOptions(const QStringList& edits, const QString& settings) {
  replay::WhatIfOptions o;
  for (const QString& e : edits) {
    auto edit = replay::parseEdit(e.trimmed().toStdString());  // "cleanup after:x.py:load"
    if (!edit) return edit.status();
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
