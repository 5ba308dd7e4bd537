#include "widgets/compact_table.h"

#include <algorithm>

#include <QEvent>
#include <QHeaderView>
#include <QTableView>

#include <vector>

#include "geometry/column_fit.h"

namespace reservoir::gui {

FirstColumnFit::FirstColumnFit(QTableView* table, int min_width) : QObject(table), table_(table), min_(min_width) {
  table->viewport()->installEventFilter(this);
  // A column the user widens or narrows: the first column takes up the difference.
  connect(table->horizontalHeader(), &QHeaderView::sectionResized, this, [this](int section, int, int) {
    if (section != 0 && !fitting_) fitFirst();
  });
}

bool FirstColumnFit::eventFilter(QObject* watched, QEvent* event) {
  if (watched == table_->viewport() && event->type() == QEvent::Resize) fit();
  return QObject::eventFilter(watched, event);
}

// The other columns at their contents' width while the first keeps its own (up to two fifths of
// the table, at least its minimum); past that the widest are capped (elided in the middle; their
// tooltips have the text) rather than pushed out of view behind a scroll bar.
void FirstColumnFit::fit() {
  const QHeaderView* h = table_->horizontalHeader();
  std::vector<int> columns;
  std::vector<int> wanted;
  std::vector<int> floors;  // a header stays readable (a header is painted bold: it does not elide well)
  const int least = table_->fontMetrics().horizontalAdvance(QStringLiteral("0000…"));
  for (int c = 1; c < h->count(); ++c) {
    if (h->isSectionHidden(c)) continue;
    columns.push_back(c);
    wanted.push_back(std::max(h->sectionSizeHint(c), static_cast<const QAbstractItemView*>(table_)->sizeHintForColumn(c)));
    floors.push_back(std::max(least, h->sectionSizeHint(c)));
  }
  // The first column (what a row is) keeps its contents' width up to two fifths of the table
  // before the others are fitted: a long settings text elides rather than the figure's name.
  const int room = table_->viewport()->width();
  const int first = std::max(min_, std::min(static_cast<const QAbstractItemView*>(table_)->sizeHintForColumn(0), room * 2 / 5));
  const std::vector<int> widths = fitColumns(wanted, floors, room - first);
  fitting_ = true;
  for (std::size_t i = 0; i < columns.size(); ++i) table_->setColumnWidth(columns[i], widths[i]);
  fitting_ = false;
  fitFirst();
}

void FirstColumnFit::fitFirst() {
  const QHeaderView* h = table_->horizontalHeader();
  int others = 0;
  for (int c = 1; c < h->count(); ++c) others += h->isSectionHidden(c) ? 0 : h->sectionSize(c);
  fitting_ = true;
  table_->setColumnWidth(0, std::max(min_, table_->viewport()->width() - others));
  fitting_ = false;
}

QTableView* compactTable(QAbstractItemModel* model, QWidget* parent, int first_min) {
  auto* t = new QTableView(parent);
  t->setModel(model);
  t->verticalHeader()->hide();
  // Rows of one text line (the style's default is taller): more of a list in a laptop's pane.
  t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().lineSpacing() + 8);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->setSelectionMode(QAbstractItemView::SingleSelection);
  t->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);  // FirstColumnFit sizes them
  t->horizontalHeader()->setStretchLastSection(false);
  t->setTextElideMode(Qt::ElideMiddle);
  // A capped column's header elides too (centred, it was clipped at both ends: "eserved at 1st poin").
  t->horizontalHeader()->setTextElideMode(Qt::ElideRight);  // long names and points keep both ends; the tooltip has them whole
  t->setWordWrap(false);
  auto* fit = new FirstColumnFit(t, first_min);
  QObject::connect(model, &QAbstractItemModel::modelReset, fit, &FirstColumnFit::fit);
  QObject::connect(model, &QAbstractItemModel::rowsInserted, fit, &FirstColumnFit::fit);
  QObject::connect(model, &QAbstractItemModel::layoutChanged, fit, &FirstColumnFit::fit);
  QObject::connect(model, &QAbstractItemModel::dataChanged, fit, &FirstColumnFit::fit);
  return t;
}

}  // namespace reservoir::gui
