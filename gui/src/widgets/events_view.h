// The trace as a virtual list in sync with the cursor, with a search box (address, size,
// action, frame; see models/event_search.h) that filters it, and beside it the details of the
// highlighted event (EventDetails: its stack, size, stream, address, time).
#pragma once

#include <QModelIndex>
#include <QWidget>

class QLabel;
class QLineEdit;
class QTableView;

namespace reservoir::gui {

class EventDetails;
class EventFilterProxy;
class EventTableModel;
class TraceDocument;

class EventsView : public QWidget {
  Q_OBJECT

 public:
  explicit EventsView(TraceDocument* doc, QWidget* parent = nullptr);
  void setQuery(const QString& text);  // applies it now
  [[nodiscard]] EventTableModel* model() const { return model_; }
  [[nodiscard]] EventFilterProxy* proxy() const { return proxy_; }
  [[nodiscard]] QTableView* table() const { return table_; }
  [[nodiscard]] EventDetails* details() const { return details_; }

 signals:
  void pointPicked(const QString& point);

 private:
  void applyQuery();
  void followCursor();
  void slideWindow(int scroll_value);  // at the scroll bar's ends: the proxy's window moves on
  void setCursorFromTable(const QModelIndex& row);
  void jumpMatch(int direction);
  void showDetails();  // of the table's current row
  TraceDocument* doc_;
  QLineEdit* search_;
  QLabel* status_;
  QTableView* table_;
  EventDetails* details_;
  EventTableModel* model_;
  EventFilterProxy* proxy_;
  bool syncing_ = false;     // the table follows the cursor: its row changes are not the user's
  bool from_table_ = false;  // the cursor moves to the table's row: the table need not follow
};

}  // namespace reservoir::gui
