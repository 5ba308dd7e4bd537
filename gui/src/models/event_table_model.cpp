#include "models/event_table_model.h"

#include <QBrush>
#include <QColor>
#include <QFont>

#include "app/format.h"

namespace reservoir::gui {

EventTableModel::EventTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void EventTableModel::setTrace(std::shared_ptr<const RecordedPlot> plot) {
  beginResetModel();
  plot_ = std::move(plot);
  endResetModel();
}

int EventTableModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !plot_) return 0;
  return static_cast<int>(plot_->events());
}

int EventTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant EventTableModel::display(std::uint32_t e, int column) const {
  const auto& t = *plot_->trace;
  const auto& ev = t.deviceTrace().events[e];
  const bool has_size = ev.action != traces::Action::kSnapshot && ev.action != traces::Action::kUserDefined;
  switch (column) {
    case kIndex: return e;
    case kTime: return timeText(t.deviceTrace().timeOf(e) - t.facts.first_time_us);
    case kAction: return QString::fromUtf8(traces::actionName(ev.action).data());
    case kAddress:
      return ev.action == traces::Action::kOom
                 ? QStringLiteral("free %1").arg(sizeText(static_cast<std::int64_t>(ev.addr)))
                 : addressText(ev.addr);
    case kSize: return has_size ? sizeText(static_cast<std::int64_t>(ev.size)) : QVariant();
    case kStream: return QString::number(t.snapshot().stream(ev));
    case kAllocation: {
      const auto a = t.lifetimes.eventAllocation(e);
      return a == replay::AllocationLifetimes::kNone ? QVariant() : QVariant(QStringLiteral("#%1").arg(a));
    }
    case kReserved: return sizeText(t.series.reserved[e]);
    case kFrame: return topUserFrame(t.snapshot(), ev.stack);
    default: return {};
  }
}

QVariant EventTableModel::data(const QModelIndex& index, int role) const {
  if (!plot_ || !index.isValid() || index.row() >= rowCount()) return {};
  const auto e = static_cast<std::uint32_t>(index.row());
  const auto& ev = plot_->trace->deviceTrace().events[e];
  switch (role) {
    case Qt::DisplayRole: return display(e, index.column());
    case EventRole: return e;
    case StackRole: return ev.stack.value();
    case SortValueRole: return index.column() == kSize ? QVariant(static_cast<qulonglong>(ev.size)) : QVariant(e);
    case Qt::TextAlignmentRole:
      return index.column() == kSize || index.column() == kReserved || index.column() == kIndex
                 ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter))
                 : QVariant();
    case Qt::ForegroundRole:
      if (ev.action == traces::Action::kOom) return QBrush(QColor(200, 0, 0));
      if (ev.action == traces::Action::kSegmentAlloc || ev.action == traces::Action::kSegmentMap)
        return QBrush(QColor(0, 90, 170));
      if (ev.action == traces::Action::kSegmentFree || ev.action == traces::Action::kSegmentUnmap)
        return QBrush(QColor(150, 80, 0));
      return {};
    default: return {};
  }
}

QVariant EventTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return QAbstractTableModel::headerData(section, orientation, role);
  static const char* names[] = {"#",      "time",       "action",   "address",  "size",
                                "stream", "allocation", "reserved", "top frame"};
  return section >= 0 && section < kColumnCount ? QString::fromLatin1(names[section]) : QVariant();
}

}  // namespace reservoir::gui
