#include "widgets/compact_table.h"

#include <algorithm>

#include <QEvent>
#include <QHeaderView>
#include <QTableView>

namespace reservoir::gui {

FirstColumnFit::FirstColumnFit(QTableView* table, int min_width) : QObject(table), table_(table), min_(min_width) {
  table->viewport()->installEventFilter(this);
  connect(table->horizontalHeader(), &QHeaderView::sectionResized, this, [this](int section, int, int) {
    if (section != 0) fit();
  });
}

bool FirstColumnFit::eventFilter(QObject* watched, QEvent* event) {
  if (watched == table_->viewport() && event->type() == QEvent::Resize) fit();
  return QObject::eventFilter(watched, event);
}

void FirstColumnFit::fit() {
  const QHeaderView* h = table_->horizontalHeader();
  int others = 0;
  for (int c = 1; c < h->count(); ++c) others += h->isSectionHidden(c) ? 0 : h->sectionSize(c);
  table_->setColumnWidth(0, std::max(min_, table_->viewport()->width() - others));
}

QTableView* compactTable(QAbstractItemModel* model, QWidget* parent, int first_min) {
  auto* t = new QTableView(parent);
  t->setModel(model);
  t->verticalHeader()->hide();
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->setSelectionMode(QAbstractItemView::SingleSelection);
  t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  t->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Interactive);
  t->horizontalHeader()->setStretchLastSection(false);
  t->setTextElideMode(Qt::ElideMiddle);  // long names and points keep both ends; the tooltip has them whole
  t->setWordWrap(false);
  auto* fit = new FirstColumnFit(t, first_min);
  QObject::connect(model, &QAbstractItemModel::modelReset, fit, &FirstColumnFit::fit);
  QObject::connect(model, &QAbstractItemModel::rowsInserted, fit, &FirstColumnFit::fit);
  QObject::connect(model, &QAbstractItemModel::layoutChanged, fit, &FirstColumnFit::fit);
  return t;
}

}  // namespace reservoir::gui
