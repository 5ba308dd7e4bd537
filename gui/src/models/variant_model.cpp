#include "models/variant_model.h"

#include <QBrush>
#include <QColor>

#include "app/format.h"
#include "app/trace_document.h"

namespace reservoir::gui {

VariantModel::VariantModel(TraceDocument* document, QObject* parent) : QAbstractTableModel(parent), doc_(document) {
  connect(doc_, &TraceDocument::variantsChanged, this, &VariantModel::refresh);
  rows_ = static_cast<int>(doc_->variants().size());
}

void VariantModel::refresh() {
  beginResetModel();
  rows_ = static_cast<int>(doc_->variants().size());
  endResetModel();
}

int VariantModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : rows_; }
int VariantModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant VariantModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rows_) return {};
  const Variant& v = doc_->variants()[static_cast<std::size_t>(index.row())];
  if (role == VariantRole) return index.row();
  const auto* r = v.report.get();
  const std::int64_t saving = r ? r->baseline.peak_reserved.bytes - r->whatif.peak_reserved.bytes : 0;
  if (role == SavingRole) return static_cast<qlonglong>(saving);
  // The name in full (the table elides it in the middle), with the error where it failed.
  if (role == Qt::ToolTipRole) return v.error.isEmpty() ? v.name : v.name + QStringLiteral("\n") + v.error;
  if (role == Qt::TextAlignmentRole && index.column() != kName) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ForegroundRole) {
    if (!v.error.isEmpty() || (index.column() == kOom && r && r->whatif.oom)) return QBrush(QColor(200, 0, 0));
    if (index.column() == kSaving && saving > 0) return QBrush(QColor(0, 130, 0));
    return {};
  }
  if (role != Qt::DisplayRole) return {};
  if (index.column() == kName) return v.name;
  if (v.running) return index.column() == kPeakReserved ? QStringLiteral("running...") : QString();
  if (!v.error.isEmpty()) return index.column() == kPeakReserved ? QStringLiteral("error") : QString();
  switch (index.column()) {
    case kPeakReserved: return sizeText(r->whatif.peak_reserved.bytes);
    case kPeakAllocated: return sizeText(r->whatif.peak_allocated.bytes);
    case kSaving:
      return saving == 0  ? QStringLiteral("none")
             : saving > 0 ? sizeText(saving)
                          : QStringLiteral("rises by %1").arg(sizeText(-saving));
    case kFinalReserved: return sizeText(r->whatif.final_reserved);
    case kAtProbe: {
      // The first probe's point, else the first cleanup's or release's (just after it).
      if (!r->whatif.probes.empty() && !r->baseline.probes.empty())
        return QStringLiteral("%1 -> %2").arg(sizeText(r->baseline.probes.front().reserved),
                                              sizeText(r->whatif.probes.front().reserved));
      if (!r->whatif.at_edits.empty() && !r->baseline.at_edits.empty())
        return QStringLiteral("%1 -> %2").arg(sizeText(r->baseline.at_edits.front().reserved),
                                              sizeText(r->whatif.at_edits.front().reserved));
      return QStringLiteral("-");
    }
    case kOom:
      return r->whatif.oom ? QStringLiteral("OOM at event %1").arg(r->whatif.oom->event) : QStringLiteral("no");
    default: return {};
  }
}

QVariant VariantModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {
      "variant", "peak reserved", "peak allocated", "peak saving", "reserved at 1st point", "final reserved", "OOM"};
  return section >= 0 && section < kColumnCount ? QString::fromLatin1(names[section]) : QVariant();
}

}  // namespace reservoir::gui
