#include "app/export_snapshot.h"

#include "app/trace_document.h"
#include "reservoir/replay/export.h"
#include "reservoir/simulator/alloc_config.h"
#include "reservoir/traces/request_stream.h"
#include "reservoir/traces/writer.h"

namespace reservoir::gui {

Status exportWhatIfSnapshot(const ModelPlot& model, const QStringList& edits, const QString& settings,
                            const QString& path) {
  auto options = makeWhatIfOptions(edits, settings);
  if (!options) return options.status();
  const auto& stage = *model.model;
  const auto& loaded = *stage.owner;
  // The session drops the prepared request stream (replays do not read it); the export names
  // each block's allocation stack from it.
  replay::PreparedTrace prepared = stage.prepared;
  prepared.requests = traces::buildRequestStream(loaded.trace());
  auto resolved = replay::resolveEdits(prepared, options->edits);
  if (!resolved) return resolved.status();
  replay::RunSettings rs;
  rs.config = prepared.recorded_config;
  rs.fraction = prepared.fraction;
  if (options->settings) {
    auto cfg = sim::parseAllocConf(*options->settings);
    if (!cfg) return cfg.status();
    rs.config = *cfg;
  }
  auto snap = replay::exportRun(prepared, *resolved, rs);
  if (!snap) return snap.status();
  return traces::writeSnapshotFile(*snap, path.toStdString());
}

}  // namespace reservoir::gui
