// Edit texts as the what-if panel and the command line give them ("cleanup after:x.py:load"),
// and the Device group's texts, parsed by the library's rules.
#include "app/trace_document.h"

#include "reservoir/replay/option_text.h"

namespace reservoir::gui {

namespace {

// The library's messages name the panel's fields ("settings 'x': ...", "memory fraction: ...").
std::string fieldLabel(replay::Input input) {
  switch (input) {
    case replay::Input::kSet: return "settings";
    case replay::Input::kFraction: return "memory fraction";
    default: return std::string(replay::inputName(input));
  }
}
std::string fieldGive(replay::Input input) { return "the " + fieldLabel(input) + " field"; }
std::string fieldGiveValue(replay::Input input, std::string_view value) {
  return fieldLabel(input) + " " + std::string(value);
}
const replay::Wording& panelWording() {
  static const replay::Wording wording{&fieldLabel, &fieldGive, &fieldGiveValue, replay::plainWording().run};
  return wording;
}

}  // namespace

Expected<replay::WhatIfOptions> makeWhatIfOptions(const QStringList& edits, const QString& settings,
                                                  const VariantDevice& device) {
  std::vector<replay::Edit> parsed;
  for (const QString& e : edits) {
    auto edit = replay::parseEdit(e.trimmed().toStdString());  // "cleanup after:x.py:load"
    if (!edit) return edit.status();
    parsed.push_back(std::move(*edit));
  }
  replay::EditedRunText text;
  if (!settings.trimmed().isEmpty()) text.set = settings.trimmed().toStdString();
  text.capacity = device.capacity.trimmed().toStdString();
  text.overhead = device.overhead.trimmed().toStdString();
  text.fraction = device.fraction;
  auto run = replay::parseEditedRunOptions(text, panelWording());
  if (!run) return run.status();
  replay::WhatIfOptions o;
  static_cast<replay::EditedRunOptions&>(o) = std::move(*run);
  o.edits = std::move(parsed);
  return o;
}

}  // namespace reservoir::gui
