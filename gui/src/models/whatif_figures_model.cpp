#include "models/whatif_figures_model.h"

#include <QBrush>
#include <QColor>

#include <algorithm>

#include "app/format.h"
#include "reservoir/replay/report_text.h"

namespace reservoir::gui {

namespace {

using Cell = WhatIfFiguresModel::Cell;
using Row = WhatIfFiguresModel::Row;

QString words(const std::string& s) { return QString::fromStdString(s); }

Cell textCell(const QString& text) { return Cell{text, QString(), std::nullopt}; }

Cell sizeCell(std::int64_t bytes) { return Cell{sizeText(bytes), exactSizeText(bytes), bytes}; }

Cell changeCell(std::int64_t from, std::int64_t to) {
  if (from == to) return Cell{QStringLiteral("same"), QString(), 0};
  return Cell{sizeText(to - from), exactSizeText(to - from), to - from};
}

// A size row: lower is better.
Row sizeRow(const QString& figure, const QString& tooltip, std::int64_t recording, std::int64_t whatif) {
  return Row{figure, tooltip, sizeCell(recording), sizeCell(whatif), changeCell(recording, whatif),
             whatif < recording ? 1 : whatif > recording ? -1 : 0};
}

Cell oomCell(const std::optional<replay::OomInfo>& oom) {
  if (!oom) return Cell{QStringLiteral("no"), QString(), std::nullopt};
  return Cell{QStringLiteral("at event %1").arg(oom->event),
              QStringLiteral("malloc(%1) fails (%2 failed mallocs)").arg(exactSizeText(static_cast<std::int64_t>(oom->size))).arg(oom->count),
              std::nullopt};
}

Cell demandCell(const replay::DemandResult& d) {
  if (!d.capacity_known) return Cell{QStringLiteral("unknown (no capacity)"), QString(), std::nullopt};
  return Cell{(d.fits ? QStringLiteral("fits, %1 free") : QStringLiteral("does NOT fit, %1 free")).arg(sizeText(d.free)),
              exactSizeText(d.free), d.free};
}

// Allocator settings, whole: the table's columns fit its pane (compactTable: a long text is
// elided in the middle only where it does not fit, as on a laptop); the tooltip has it whole.
Cell settingsCell(const std::string& settings) {
  if (settings.empty()) return textCell(WhatIfFiguresModel::tr("(defaults)"));
  const QString whole = words(settings);
  return Cell{whole, whole, std::nullopt};
}

const replay::DemandResult* demandIn(const replay::RunResult& run, const std::string& text) {
  for (const auto& d : run.demands)
    if (d.text == text) return &d;
  return nullptr;
}

}  // namespace

WhatIfFiguresModel::WhatIfFiguresModel(QObject* parent) : QAbstractTableModel(parent) {}

void WhatIfFiguresModel::setReport(std::shared_ptr<const replay::WhatIfReport> report) {
  beginResetModel();
  report_ = std::move(report);
  rows_.clear();
  if (report_) {
    addEditPoints();
    addProbes();
    addSizes();
    addOutcome();
    addDevice();
  }
  endResetModel();
}

// Reserved just after each cleanup and release, the first time its point is reached (the
// recording: at the same point).
void WhatIfFiguresModel::addEditPoints() {
  const auto& rep = *report_;
  std::vector<std::string> shown;
  for (const auto& e : rep.edits) {
    const auto* w = replay::firstEditFigure(rep.whatif, e);
    const auto* b = replay::firstEditFigure(rep.baseline, e);
    if (!w || !b || std::find(shown.begin(), shown.end(), w->point) != shown.end()) continue;
    shown.push_back(w->point);
    const QString kind = e.kind == replay::Edit::Kind::kCleanup ? tr("cleanup") : tr("release");
    rows_.push_back(sizeRow(tr("reserved %1 (%2)").arg(words(replay::describePoint(w->point)), kind),
                            tr("just after the %1 at %2; the recording at the same point")
                                .arg(kind, words(w->point)),
                            b->reserved, w->reserved));
  }
}

// Reserved at each probe's point not already shown (the first time it is reached).
void WhatIfFiguresModel::addProbes() {
  const auto& rep = *report_;
  for (std::size_t i = 0; i < rep.whatif.probes.size(); ++i) {
    const auto& p = rep.whatif.probes[i];
    const QString figure = tr("reserved %1").arg(words(replay::describePoint(p.point)));
    const bool shown = std::any_of(rows_.begin(), rows_.end(), [&](const Row& r) {
      return r.figure == figure || r.figure.startsWith(figure + QStringLiteral(" ("));
    });
    if (shown || i >= rep.baseline.probes.size()) continue;
    rows_.push_back(sizeRow(figure, tr("at the probe %1").arg(words(p.point)), rep.baseline.probes[i].reserved,
                            p.reserved));
  }
}

void WhatIfFiguresModel::addSizes() {
  const auto& b = report_->baseline;
  const auto& w = report_->whatif;
  rows_.push_back(sizeRow(tr("peak reserved"), tr("the what-if peak is reached at event %1").arg(w.peak_reserved.event),
                          b.peak_reserved.bytes, w.peak_reserved.bytes));
  rows_.push_back(sizeRow(tr("peak allocated"), QString(), b.peak_allocated.bytes, w.peak_allocated.bytes));
  rows_.push_back(sizeRow(tr("final reserved"), QString(), b.final_reserved, w.final_reserved));
}

void WhatIfFiguresModel::addOutcome() {
  const auto& b = report_->baseline;
  const auto& w = report_->whatif;
  Row oom{tr("out of memory"), QString(), oomCell(b.oom), oomCell(w.oom), Cell{}, 0};
  if (w.oom && !b.oom) oom = Row{oom.figure, oom.tooltip, oom.recording, oom.whatif, textCell(tr("new")), -1};
  if (b.oom && !w.oom) oom = Row{oom.figure, oom.tooltip, oom.recording, oom.whatif, textCell(tr("gone")), 1};
  rows_.push_back(oom);
  for (const auto& d : w.demands) {
    const auto* bd = demandIn(b, d.text);
    rows_.push_back(Row{tr("demand %1").arg(words(d.text)), tr("another process asks for this much there"),
                        bd ? demandCell(*bd) : Cell{}, demandCell(d), Cell{}, d.capacity_known && !d.fits ? -1 : 0});
  }
  const std::int64_t saving = b.peak_reserved.bytes - w.peak_reserved.bytes;
  const QString text = saving == 0  ? tr("none")
                       : saving > 0 ? sizeText(saving)
                                    : tr("rises by %1").arg(sizeText(-saving));
  rows_.push_back(Row{tr("peak saving"), tr("peak reserved, the recording's less the what-if's"), Cell{},
                      Cell{text, exactSizeText(saving), saving}, Cell{}, saving > 0 ? 1 : saving < 0 ? -1 : 0});
}

// The edited run's device as the library chose it (the recording runs on the same capacity).
void WhatIfFiguresModel::addDevice() {
  const auto& rep = *report_;
  const auto& run = rep.edited_run;
  const QString source = words(rep.capacity_source);
  const Cell capacity = rep.capacity ? Cell{sizeText(static_cast<std::int64_t>(*rep.capacity)), source,
                                            static_cast<std::int64_t>(*rep.capacity)}
                                     : Cell{tr("unlimited"), source, std::nullopt};
  rows_.push_back(Row{tr("capacity"), source, capacity, capacity, Cell{}, 0});
  if (run.usable && run.capacity && *run.usable != *run.capacity) {
    const Cell usable = sizeCell(static_cast<std::int64_t>(*run.usable));
    rows_.push_back(Row{tr("usable (less the overhead)"), QString(), usable, usable, Cell{}, 0});
  }
  rows_.push_back(Row{tr("memory fraction"), words(run.fraction_source),
                      textCell(QString::number(run.recorded_fraction)), textCell(QString::number(run.fraction)), Cell{}, 0});
  rows_.push_back(Row{tr("settings"), words(run.config_source), settingsCell(rep.settings_baseline),
                      settingsCell(rep.settings_whatif), Cell{}, 0});
}

int WhatIfFiguresModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int WhatIfFiguresModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant WhatIfFiguresModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= kColumnCount) return {};
  const Row& r = rows_[static_cast<std::size_t>(index.row())];
  if (index.column() == kFigure) {
    if (role == Qt::DisplayRole) return r.figure;
    // The figure whole (the view may elide it), then what it is.
    if (role == Qt::ToolTipRole) return r.tooltip.isEmpty() ? r.figure : r.figure + QStringLiteral(": ") + r.tooltip;
    return {};
  }
  const Cell& c = index.column() == kRecording ? r.recording : index.column() == kWhatIf ? r.whatif : r.change;
  switch (role) {
    case Qt::DisplayRole: return c.text;
    case Qt::ToolTipRole: return c.tooltip.isEmpty() ? QVariant() : QVariant(c.tooltip);
    case Qt::TextAlignmentRole: return int(Qt::AlignRight | Qt::AlignVCenter);
    case BytesRole: return c.bytes ? QVariant(static_cast<qlonglong>(*c.bytes)) : QVariant();
    case Qt::ForegroundRole:
      if (index.column() == kRecording || r.tone == 0) return {};
      return QBrush(r.tone > 0 ? QColor(0, 130, 0) : QColor(200, 0, 0));
    default: return {};
  }
}

QVariant WhatIfFiguresModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return QAbstractTableModel::headerData(section, orientation, role);
  switch (section) {
    case kFigure: return tr("figure");
    case kRecording: return tr("recording");
    case kWhatIf: return tr("what-if");
    case kChange: return tr("change");
    default: return {};
  }
}

}  // namespace reservoir::gui
