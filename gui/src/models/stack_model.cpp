#include "models/stack_model.h"

#include "reservoir/replay/frame_text.h"

namespace reservoir::gui {

namespace {

QString text(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

}  // namespace

StackModel::StackModel(QObject* parent) : QAbstractTableModel(parent) {}

void StackModel::setStack(std::shared_ptr<const RecordedPlot> plot, StackId stack) {
  beginResetModel();
  plot_ = std::move(plot);
  frames_.clear();
  if (plot_ && stack.valid() && stack.value() < plot_->trace->snapshot().stackCount()) {
    const auto frames = plot_->trace->snapshot().stack(stack);
    frames_.assign(frames.begin(), frames.end());
  }
  endResetModel();
}

int StackModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(frames_.size());
}

int StackModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant StackModel::data(const QModelIndex& index, int role) const {
  if (!plot_ || !index.isValid() || index.row() >= rowCount() || index.column() >= kColumnCount) return {};
  const auto& snap = plot_->trace->snapshot();
  const FrameId id = frames_[static_cast<std::size_t>(index.row())];
  const traces::Frame& f = snap.frames[id.value()];
  switch (role) {
    case Qt::DisplayRole:
      if (index.column() == kFunction) return text(snap.str(f.name));
      return QStringLiteral("%1:%2").arg(QString::fromStdString(replay::shortFramePath(snap.str(f.filename)))).arg(f.line);
    case Qt::ToolTipRole:
      if (index.column() == kFunction) return text(snap.str(f.name));
      return QStringLiteral("%1:%2").arg(text(snap.str(f.filename))).arg(f.line);
    case FrameRole: return id.value();
    default: return {};
  }
}

QVariant StackModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return QAbstractTableModel::headerData(section, orientation, role);
  if (section == kFunction) return tr("function");
  if (section == kFile) return tr("file:line");
  return {};
}

}  // namespace reservoir::gui
