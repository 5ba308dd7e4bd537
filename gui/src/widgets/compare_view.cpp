#include "widgets/compare_view.h"

#include <algorithm>

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include "app/format.h"
#include "app/trace_document.h"

namespace reservoir::gui {

CompareView::CompareView(QWidget* parent)
    : QWidget(parent), a_(new QComboBox(this)), b_(new QComboBox(this)), axis_(new QComboBox(this)),
      annotation_(new QComboBox(this)), plot_(new ComparePlot(this)), table_(new QTableWidget(this)) {
  axis_->addItems({tr("align on events"), tr("align on time"), tr("align on an annotation")});
  annotation_->setEditable(true);
  annotation_->setMinimumContentsLength(24);
  annotation_->setToolTip(
      tr("The annotation whose starts are put on each other (e.g. ProfilerStep#, or a "
         "record_function range such as train_step)"));
  annotation_->setEnabled(false);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Compare"), this));
  bar->addWidget(a_, 1);
  bar->addWidget(new QLabel(tr("with"), this));
  bar->addWidget(b_, 1);
  bar->addWidget(axis_);
  bar->addWidget(annotation_);
  table_->setColumnCount(4);
  table_->setHorizontalHeaderLabels({tr("fact"), tr("A"), tr("B"), tr("B - A")});
  table_->verticalHeader()->hide();
  // Rows one text line high, as the What-if panel's tables: on a laptop more facts are in view.
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().lineSpacing() + 8);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(plot_);
  split->addWidget(table_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->addLayout(bar);
  lay->addWidget(split);
  connect(a_, &QComboBox::currentIndexChanged, this, &CompareView::refresh);
  connect(b_, &QComboBox::currentIndexChanged, this, &CompareView::refresh);
  connect(axis_, &QComboBox::currentIndexChanged, this, &CompareView::applyAxis);
  connect(annotation_, &QComboBox::currentTextChanged, this, [this] {
    if (axis_->currentIndex() == 2) applyAxis();
  });
}

void CompareView::applyAxis() {
  const int mode = axis_->currentIndex();
  annotation_->setEnabled(mode == 2);
  plot_->setTimeAxis(mode == 1);
  plot_->setAnnotation(mode == 2 ? annotation_->currentText().trimmed() : QString());
}

void CompareView::alignOnAnnotation(const QString& annotation) {
  {
    const QSignalBlocker ba(axis_), bn(annotation_);
    axis_->setCurrentIndex(annotation.isEmpty() ? 0 : 2);
    annotation_->setCurrentText(annotation);
  }
  applyAxis();
}

void CompareView::fillAnnotations(TraceDocument* a, TraceDocument* b) {
  const QSignalBlocker block(annotation_);
  const QString current = annotation_->currentText();
  annotation_->clear();
  if (a && b && a->recorded() && b->recorded()) {
    const auto& ta = *a->recorded()->trace;
    const auto& tb = *b->recorded()->trace;
    const auto in_b = replay::alignableAnnotations(tb.snapshot(), tb.device_index);
    for (const auto& name : replay::alignableAnnotations(ta.snapshot(), ta.device_index))
      if (std::find(in_b.begin(), in_b.end(), name) != in_b.end()) annotation_->addItem(QString::fromStdString(name));
  }
  annotation_->setCurrentText(current.isEmpty() && annotation_->count() ? annotation_->itemText(0) : current);
}

void CompareView::setDocuments(const std::vector<TraceDocument*>& docs) {
  docs_.assign(docs.begin(), docs.end());
  for (auto* combo : {a_, b_}) {
    const QSignalBlocker block(combo);
    combo->clear();
    for (auto* d : docs) combo->addItem(d->title());
  }
  for (auto* d : docs) {
    connect(d, &TraceDocument::loaded, this, &CompareView::refresh, Qt::UniqueConnection);
    connect(d, &TraceDocument::modelled, this, &CompareView::refresh, Qt::UniqueConnection);
  }
  choose(0, docs.size() > 1 ? 1 : 0);
}

void CompareView::choose(int a, int b) {
  const QSignalBlocker ba(a_), bb(b_);
  a_->setCurrentIndex(a);
  b_->setCurrentIndex(b);
  refresh();
}

void CompareView::refresh() {
  auto pick = [&](QComboBox* c) -> TraceDocument* {
    const int i = c->currentIndex();
    return i >= 0 && i < static_cast<int>(docs_.size()) ? docs_[static_cast<std::size_t>(i)].data() : nullptr;
  };
  TraceDocument* a = pick(a_);
  TraceDocument* b = pick(b_);
  fillAnnotations(a, b);
  plot_->setDocuments(a, b);
  applyAxis();
  table_->setRowCount(0);
  if (!a || !b || !a->recorded() || !b->recorded()) return;
  auto row = [&](const QString& name, std::int64_t va, std::int64_t vb, bool bytes) {
    const int r = table_->rowCount();
    table_->insertRow(r);
    auto text = [&](std::int64_t v) { return bytes ? sizeText(v) : QString::number(v); };
    table_->setItem(r, 0, new QTableWidgetItem(name));
    table_->setItem(r, 1, new QTableWidgetItem(text(va)));
    table_->setItem(r, 2, new QTableWidgetItem(text(vb)));
    table_->setItem(r, 3, new QTableWidgetItem(vb == va ? QStringLiteral("=") : text(vb - va)));
  };
  const auto& fa = a->recorded()->trace->series;
  const auto& fb = b->recorded()->trace->series;
  row(tr("events"), static_cast<std::int64_t>(fa.size()), static_cast<std::int64_t>(fb.size()), false);
  row(tr("peak reserved"), fa.peak_reserved, fb.peak_reserved, true);
  row(tr("peak live (requested)"), fa.peak_live, fb.peak_live, true);
  if (a->model() && b->model())
    row(tr("peak allocated (model)"), a->model()->peak_allocated, b->model()->peak_allocated, true);
  row(tr("final reserved"), fa.reserved.empty() ? 0 : fa.reserved.back(), fb.reserved.empty() ? 0 : fb.reserved.back(),
      true);
  row(tr("out-of-memory events"), static_cast<std::int64_t>(fa.ooms.size()), static_cast<std::int64_t>(fb.ooms.size()),
      false);
  row(tr("allocations"), static_cast<std::int64_t>(a->recorded()->trace->lifetimes.count()),
      static_cast<std::int64_t>(b->recorded()->trace->lifetimes.count()), false);
}

}  // namespace reservoir::gui
