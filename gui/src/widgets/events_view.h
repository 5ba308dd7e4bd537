// The trace as a virtual list in sync with the cursor, with a search box (address, size,
// action, frame; see models/event_search.h) that filters it.
#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QTableView;

namespace reservoir::gui {

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

 signals:
  void pointPicked(const QString& point);

 private:
  void applyQuery();
  void followCursor();
  void jumpMatch(int direction);
  TraceDocument* doc_;
  QLineEdit* search_;
  QLabel* status_;
  QTableView* table_;
  EventTableModel* model_;
  EventFilterProxy* proxy_;
  bool syncing_ = false;
};

}  // namespace reservoir::gui
