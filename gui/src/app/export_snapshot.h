// Writing a what-if variant's modelled run as a snapshot pickle (replay/export.h) that
// PyTorch's memory_viz and reservoir open.
#pragma once

#include <QString>
#include <QStringList>

#include "app/plot_data.h"
#include "reservoir/core/status.h"

namespace reservoir::gui {

// `edits`/`settings` as a Variant holds them; empty edits and settings export the baseline.
Status exportWhatIfSnapshot(const ModelPlot& model, const QStringList& edits, const QString& settings,
                            const QString& path);

}  // namespace reservoir::gui
