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
      begin_ = 0;
      endResetModel();
    });
  }
  begin_ = 0;
  endResetModel();
}

void EventFilterProxy::setMatches(std::vector<std::uint32_t> rows, bool active) {
  beginResetModel();
  rows_ = std::move(rows);
  active_ = active;
  begin_ = 0;
  endResetModel();
}

void EventFilterProxy::setWindowRows(int rows) {
  beginResetModel();
  window_ = std::max(rows, 2);
  begin_ = 0;
  endResetModel();
}

std::size_t EventFilterProxy::shownRows() const {
  if (!sourceModel()) return 0;
  return active_ ? rows_.size() : static_cast<std::size_t>(std::max(sourceModel()->rowCount(), 0));
}

void EventFilterProxy::moveWindow(std::size_t begin) {
  const std::size_t n = shownRows(), w = static_cast<std::size_t>(window_);
  begin = n > w ? std::min(begin, n - w) : 0;
  if (begin == begin_) return;
  beginResetModel();
  begin_ = begin;
  endResetModel();
}

std::size_t EventFilterProxy::shownAtOrAfter(std::uint32_t source_row) const {
  if (!active_) return std::min<std::size_t>(source_row, shownRows());
  return static_cast<std::size_t>(std::lower_bound(rows_.begin(), rows_.end(), source_row) - rows_.begin());
}

int EventFilterProxy::showRowAtOrAfter(int source_row) {
  const std::size_t n = shownRows();
  if (n == 0) return -1;
  const std::size_t shown = std::min(shownAtOrAfter(static_cast<std::uint32_t>(std::max(source_row, 0))), n - 1);
  const auto w = static_cast<std::size_t>(window_);
  if (shown < begin_ || shown >= begin_ + w) moveWindow(shown > w / 2 ? shown - w / 2 : 0);
  return static_cast<int>(shown - begin_);
}

std::ptrdiff_t EventFilterProxy::slide(int direction) {
  const std::size_t before = begin_, half = static_cast<std::size_t>(window_) / 2;
  moveWindow(direction < 0 ? (begin_ > half ? begin_ - half : 0) : begin_ + half);
  return static_cast<std::ptrdiff_t>(begin_) - static_cast<std::ptrdiff_t>(before);
}

QModelIndex EventFilterProxy::index(int row, int column, const QModelIndex& parent) const {
  if (parent.isValid() || row < 0 || column < 0 || row >= rowCount() || column >= columnCount()) return {};
  return createIndex(row, column);
}

QModelIndex EventFilterProxy::parent(const QModelIndex&) const { return {}; }

int EventFilterProxy::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !sourceModel()) return 0;
  const std::size_t n = shownRows();
  return static_cast<int>(std::min(n - std::min(begin_, n), static_cast<std::size_t>(window_)));
}

int EventFilterProxy::columnCount(const QModelIndex& parent) const {
  if (parent.isValid() || !sourceModel()) return 0;
  return sourceModel()->columnCount();
}

QModelIndex EventFilterProxy::mapToSource(const QModelIndex& proxy) const {
  if (!proxy.isValid() || !sourceModel()) return {};
  return sourceModel()->index(static_cast<int>(sourceRowOf(begin_ + static_cast<std::size_t>(proxy.row()))),
                              proxy.column());
}

QModelIndex EventFilterProxy::mapFromSource(const QModelIndex& source) const {
  if (!source.isValid()) return {};
  const std::size_t shown = shownAtOrAfter(static_cast<std::uint32_t>(source.row()));
  if (shown >= shownRows() || sourceRowOf(shown) != static_cast<std::size_t>(source.row()) || shown < begin_) return {};
  return index(static_cast<int>(shown - begin_), source.column());
}

}  // namespace reservoir::gui
