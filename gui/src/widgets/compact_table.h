// A compact table for the What-if panel's lists (variants, figures, frames): no row header, one
// row selected at a time, names elided in the middle, and the first column (what is read first)
// given the room the others leave, but never less than a minimum.
#pragma once

#include <QObject>

class QAbstractItemModel;
class QEvent;
class QTableView;
class QWidget;

namespace reservoir::gui {

// Keeps `table`'s first column at the room the other columns leave, at least `min_width` (a
// Stretch section shrinks to a sliver when the others fill a laptop's pane: "ariai" for
// "variant"), and the other columns at their contents' width, the widest capped when they would
// not fit beside it (a settings text pushed the "change" column out of view).
class FirstColumnFit : public QObject {
 public:
  FirstColumnFit(QTableView* table, int min_width);
  bool eventFilter(QObject* watched, QEvent* event) override;
  void fit();

 private:
  void fitFirst();
  QTableView* table_;
  int min_;
  bool fitting_ = false;
};

// A table over `model`, its columns fitted so.
QTableView* compactTable(QAbstractItemModel* model, QWidget* parent, int first_min);

}  // namespace reservoir::gui
