// Rows of the event table matching a search (event_search.h), as a proxy model: an identity
// mapping when there is no query, else the list of matching source rows. Lighter than a
// QSortFilterProxyModel on millions of rows (no per-row mapping objects).
#pragma once

#include <QAbstractProxyModel>

#include <cstdint>
#include <vector>

namespace reservoir::gui {

class EventFilterProxy : public QAbstractProxyModel {
  Q_OBJECT

 public:
  explicit EventFilterProxy(QObject* parent = nullptr);

  void setSourceModel(QAbstractItemModel* source) override;
  // Matching source rows, sorted; `active` false shows every row.
  void setMatches(std::vector<std::uint32_t> rows, bool active);
  [[nodiscard]] bool filtering() const { return active_; }
  [[nodiscard]] const std::vector<std::uint32_t>& matches() const { return rows_; }
  // The proxy row showing source row `source_row`, or the nearest row after it.
  [[nodiscard]] int proxyRowAtOrAfter(int source_row) const;

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QModelIndex mapToSource(const QModelIndex& proxy) const override;
  QModelIndex mapFromSource(const QModelIndex& source) const override;

 private:
  std::vector<std::uint32_t> rows_;
  bool active_ = false;
};

}  // namespace reservoir::gui
