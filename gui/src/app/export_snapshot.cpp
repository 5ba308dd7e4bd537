#include "app/export_snapshot.h"

#include "app/trace_document.h"
#include "reservoir/replay/export.h"
#include "reservoir/traces/writer.h"

namespace reservoir::gui {

Status exportWhatIfSnapshot(const ModelPlot& model, const QStringList& edits, const QString& settings,
                            const QString& path) {
  auto options = makeWhatIfOptions(edits, settings);
  if (!options) return options.status();
  const auto& stage = *model.model;
  const replay::PreparedTrace& prepared = stage.prepared;
  auto resolved = replay::resolveEdits(prepared, options->edits);
  if (!resolved) return resolved.status();
  // The edited run's device as every entry point chooses it (capacity from the recorded
  // ooms, the recorded fraction, the given settings).
  const auto chosen = replay::chooseEditedRun(prepared, *options);
  if (!chosen) return chosen.status();
  const replay::RunSettings rs = chosen->edited();
  auto snap = replay::exportRun(prepared, *resolved, rs);
  if (!snap) return snap.status();
  return traces::writeSnapshotFile(*snap, path.toStdString());
}

}  // namespace reservoir::gui
