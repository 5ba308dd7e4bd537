#include "widgets/events_view.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QScopedValueRollback>
#include <QScrollBar>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "app/trace_document.h"
#include "models/event_filter_proxy.h"
#include "models/event_search.h"
#include "models/event_table_model.h"
#include "widgets/event_details.h"

namespace reservoir::gui {

EventsView::EventsView(TraceDocument* doc, QWidget* parent)
    : QWidget(parent), doc_(doc), search_(new QLineEdit(this)), status_(new QLabel(this)), table_(new QTableView(this)),
      details_(new EventDetails(this)), model_(new EventTableModel(this)), proxy_(new EventFilterProxy(this)) {
  search_->setPlaceholderText(
      tr("Search: 0x7f12... (address)  size>1MiB  action:segment_alloc  frame:optimizer  (Enter)"));
  search_->setClearButtonEnabled(true);
  auto* prev = new QPushButton(tr("Previous"), this);
  auto* next = new QPushButton(tr("Next"), this);
  prev->setToolTip(tr("Move the cursor to the previous matching event"));
  next->setToolTip(tr("Move the cursor to the next matching event"));
  auto* bar = new QHBoxLayout;
  bar->addWidget(search_, 1);
  bar->addWidget(prev);
  bar->addWidget(next);
  bar->addWidget(status_);
  proxy_->setSourceModel(model_);
  table_->setModel(proxy_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(20);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setContextMenuPolicy(Qt::CustomContextMenu);
  const int widths[] = {70, 90, 110, 140, 90, 60, 80, 90};
  for (int c = 0; c < 8; ++c) table_->setColumnWidth(c, widths[c]);
  // The details pane sits beside the table, not under it: what it shows never changes the
  // table's height, so a click's row stays under the mouse.
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(table_);
  split->addWidget(details_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  split->setChildrenCollapsible(false);
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->addLayout(bar);
  lay->addWidget(split);

  connect(search_, &QLineEdit::returnPressed, this, &EventsView::applyQuery);
  connect(search_, &QLineEdit::textChanged, this, [this](const QString& t) {
    if (t.isEmpty()) applyQuery();
  });
  connect(prev, &QPushButton::clicked, this, [this] { jumpMatch(-1); });
  connect(next, &QPushButton::clicked, this, [this] { jumpMatch(+1); });
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& i) {
    showDetails();
    if (syncing_ || !i.isValid()) return;
    setCursorFromTable(i);
  });
  // A click on the row already highlighted (a filtered table highlights the match at or after
  // the cursor) changes no current row, yet it moves the cursor there.
  connect(table_, &QAbstractItemView::clicked, this, [this](const QModelIndex& i) {
    if (i.isValid()) setCursorFromTable(i);
  });
  connect(table_, &QWidget::customContextMenuRequested, this, [this](QPoint pos) {
    const QModelIndex i = table_->indexAt(pos);
    if (!i.isValid()) return;
    const auto e = i.data(EventTableModel::EventRole).toUInt();
    QMenu menu;
    menu.addAction(tr("What-if: cleanup after event %1").arg(e), this,
                   [this, e] { emit pointPicked(QStringLiteral("event:%1").arg(e + 1)); });
    menu.exec(table_->viewport()->mapToGlobal(pos));
  });
  connect(doc_, &TraceDocument::loaded, this, [this] {
    model_->setTrace(doc_->recorded());
    followCursor();  // the cursor's event (0 when a trace opens) is highlighted and described
    showDetails();
  });
  connect(doc_, &TraceDocument::cursorChanged, this, &EventsView::followCursor);
  // A long trace is shown a window of rows at a time (EventFilterProxy): scrolled to its edge,
  // the window moves on.
  connect(table_->verticalScrollBar(), &QScrollBar::valueChanged, this, &EventsView::slideWindow);
  if (doc_->recorded()) model_->setTrace(doc_->recorded());
}

void EventsView::setQuery(const QString& text) {
  search_->setText(text);
  applyQuery();
}

void EventsView::applyQuery() {
  const auto rec = doc_->recorded();
  if (!rec) return;
  const QString text = search_->text().trimmed();
  auto q = parseEventQuery(text.toStdString());
  if (!q) {
    status_->setText(QString::fromStdString(q.message()));
    return;
  }
  if (q->empty()) {
    proxy_->setMatches({}, false);
    status_->setText(tr("%1 events").arg(rec->events()));
  } else {
    auto rows = matchEvents(rec->trace->snapshot(), rec->trace->deviceTrace(), *q);
    status_->setText(tr("%1 of %2 events").arg(rows.size()).arg(rec->events()));
    proxy_->setMatches(std::move(rows), true);
  }
  followCursor();
  showDetails();
}

void EventsView::showDetails() {
  const QModelIndex i = table_->currentIndex();
  std::optional<std::uint32_t> event;
  if (i.isValid()) event = i.data(EventTableModel::EventRole).toUInt();
  details_->setEvent(doc_->recorded(), event);
}

void EventsView::setCursorFromTable(const QModelIndex& i) {
  const QScopedValueRollback<bool> from_table(from_table_, true);
  doc_->setCursor(i.data(EventTableModel::EventRole).toUInt());
}

void EventsView::followCursor() {
  // The table itself moved the cursor (a click, a key): its row is current and in view, and
  // scrolling now, in the middle of a mouse press, would slide another row under the mouse,
  // which Qt's press would then select.
  if (from_table_ || proxy_->rowCount() == 0) return;
  const QScopedValueRollback<bool> syncing(syncing_, true);  // moving the window resets the rows
  const int row = proxy_->showRowAtOrAfter(static_cast<int>(doc_->cursor()));
  if (row < 0) return;
  const QModelIndex i = proxy_->index(row, 0);
  if (table_->currentIndex().row() != row || !table_->selectionModel()->isRowSelected(row, {}))
    table_->selectionModel()->setCurrentIndex(i, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  const QRect visible = table_->viewport()->rect();
  if (!visible.contains(table_->visualRect(i))) table_->scrollTo(i, QAbstractItemView::PositionAtCenter);
}

void EventsView::slideWindow(int value) {
  const QScrollBar* bar = table_->verticalScrollBar();
  const int direction = value <= bar->minimum() ? -1 : value >= bar->maximum() ? 1 : 0;
  if (direction == 0 || syncing_) return;
  const QScopedValueRollback<bool> syncing(syncing_, true);
  const int top = table_->rowAt(0);
  const std::ptrdiff_t moved = proxy_->slide(direction);
  if (moved == 0) return;
  // The same rows stay in view, and the cursor's row highlighted when the window holds it.
  const QModelIndex current = proxy_->mapFromSource(model_->index(static_cast<int>(doc_->cursor()), 0));
  if (current.isValid())
    table_->selectionModel()->setCurrentIndex(current, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  table_->scrollTo(proxy_->index(std::max(0, static_cast<int>(top - moved)), 0), QAbstractItemView::PositionAtTop);
}

void EventsView::jumpMatch(int direction) {
  if (!proxy_->filtering()) applyQuery();
  const auto& m = proxy_->matches();
  if (!proxy_->filtering() || m.empty()) return;
  const auto c = doc_->cursor();
  if (direction > 0) {
    const auto it = std::upper_bound(m.begin(), m.end(), c);
    if (it != m.end()) doc_->setCursor(*it);
  } else {
    const auto it = std::lower_bound(m.begin(), m.end(), c);
    if (it != m.begin()) doc_->setCursor(*std::prev(it));
  }
}

}  // namespace reservoir::gui
