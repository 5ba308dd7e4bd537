// Rows of the event table matching a search (event_search.h), as a proxy model: an identity
// mapping when there is no query, else the list of matching source rows. Lighter than a
// QSortFilterProxyModel on millions of rows (no per-row mapping objects).
//
// A QTableView keeps 8 bytes per row in its vertical header (153 MB for a 20 M-event trace), so
// past kWindowRows rows (setWindowRows) the proxy shows a window of them: the rows around the
// cursor, moved when the cursor leaves it (showRowAtOrAfter) or the table is scrolled to its
// edge (slide).
#pragma once

#include <QAbstractProxyModel>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace reservoir::gui {

class EventFilterProxy : public QAbstractProxyModel {
  Q_OBJECT

 public:
  static constexpr int kWindowRows = 1 << 20;  // 8 MB of header

  explicit EventFilterProxy(QObject* parent = nullptr);

  void setSourceModel(QAbstractItemModel* source) override;
  // Matching source rows, sorted; `active` false shows every row.
  void setMatches(std::vector<std::uint32_t> rows, bool active);
  [[nodiscard]] bool filtering() const { return active_; }
  [[nodiscard]] const std::vector<std::uint32_t>& matches() const { return rows_; }
  // The rows shown: every source row, or the matches. The proxy's rows are those of them in
  // [windowBegin(), windowBegin() + rowCount()).
  [[nodiscard]] std::size_t shownRows() const;
  [[nodiscard]] std::size_t windowBegin() const { return begin_; }
  void setWindowRows(int rows);  // tests: a small window
  // The proxy row showing source row `source_row`, or the nearest row after it (the last when
  // none is after it; -1 when nothing is shown), moving the window there when it lies outside.
  int showRowAtOrAfter(int source_row);
  // Moves the window by up to half its rows towards the start (direction < 0) or the end;
  // returns how many rows the proxy's rows moved by (0 at the end of the shown rows).
  std::ptrdiff_t slide(int direction);

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QModelIndex mapToSource(const QModelIndex& proxy) const override;
  QModelIndex mapFromSource(const QModelIndex& source) const override;

 private:
  [[nodiscard]] std::size_t sourceRowOf(std::size_t shown) const { return active_ ? rows_[shown] : shown; }
  // The first shown row whose source row is `source_row` or after it (shownRows() when none).
  [[nodiscard]] std::size_t shownAtOrAfter(std::uint32_t source_row) const;
  // Moves the window to begin at `begin` (clamped), resetting the model when it moves.
  void moveWindow(std::size_t begin);
  std::vector<std::uint32_t> rows_;
  bool active_ = false;
  std::size_t begin_ = 0;
  int window_ = kWindowRows;
};

}  // namespace reservoir::gui
