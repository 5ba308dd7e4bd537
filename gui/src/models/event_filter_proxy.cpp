#include "models/event_filter_proxy.h"

#include <algorithm>

namespace reservoir::gui {

EventFilterProxy::EventFilterProxy(QObject* parent) : QAbstractProxyModel(parent) {}

void EventFilterProxy::setSourceModel(QAbstractItemModel* source) {
  beginResetModel();
  if (sourceModel()) disconnect(sourceModel(), nullptr, this, nullptr);
  QAbstractProxyModel::setSourceModel(source);
  if (source) {
    connect(source, &QAbstractItemModel::modelAboutToBeReset, this, [this] { beginResetModel(); });
    connect(source, &QAbstractItemModel::modelReset, this, [this] {
      rows_.clear();
      active_ = false;
      endResetModel();
    });
  }
  endResetModel();
}

void EventFilterProxy::setMatches(std::vector<std::uint32_t> rows, bool active) {
  beginResetModel();
  rows_ = std::move(rows);
  active_ = active;
  endResetModel();
}

int EventFilterProxy::proxyRowAtOrAfter(int source_row) const {
  if (!active_) return source_row;
  const auto it = std::lower_bound(rows_.begin(), rows_.end(), static_cast<std::uint32_t>(std::max(source_row, 0)));
  return it == rows_.end() ? static_cast<int>(rows_.size()) - 1 : static_cast<int>(it - rows_.begin());
}

QModelIndex EventFilterProxy::index(int row, int column, const QModelIndex& parent) const {
  if (parent.isValid() || row < 0 || column < 0 || row >= rowCount() || column >= columnCount()) return {};
  return createIndex(row, column);
}

QModelIndex EventFilterProxy::parent(const QModelIndex&) const { return {}; }

int EventFilterProxy::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !sourceModel()) return 0;
  return active_ ? static_cast<int>(rows_.size()) : sourceModel()->rowCount();
}

int EventFilterProxy::columnCount(const QModelIndex& parent) const {
  if (parent.isValid() || !sourceModel()) return 0;
  return sourceModel()->columnCount();
}

QModelIndex EventFilterProxy::mapToSource(const QModelIndex& proxy) const {
  if (!proxy.isValid() || !sourceModel()) return {};
  const int row = active_ ? static_cast<int>(rows_[static_cast<std::size_t>(proxy.row())]) : proxy.row();
  return sourceModel()->index(row, proxy.column());
}

QModelIndex EventFilterProxy::mapFromSource(const QModelIndex& source) const {
  if (!source.isValid()) return {};
  if (!active_) return index(source.row(), source.column());
  const auto it = std::lower_bound(rows_.begin(), rows_.end(), static_cast<std::uint32_t>(source.row()));
  if (it == rows_.end() || *it != static_cast<std::uint32_t>(source.row())) return {};
  return index(static_cast<int>(it - rows_.begin()), source.column());
}

}  // namespace reservoir::gui
