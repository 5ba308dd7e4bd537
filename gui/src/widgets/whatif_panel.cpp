#include "widgets/whatif_panel.h"

#include <QComboBox>
#include <QCompleter>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "app/trace_document.h"
#include "models/variant_model.h"
#include "reservoir/replay/point_help.h"
#include "widgets/sweep_dialog.h"

namespace reservoir::gui {

WhatIfPanel::WhatIfPanel(TraceDocument* doc, QWidget* parent)
    : QWidget(parent), doc_(doc), kind_(new QComboBox(this)), point_(new QLineEdit(this)),
      edits_(new QPlainTextEdit(this)), settings_(new QLineEdit(this)), sweep_(new QPushButton(tr("Sweep..."), this)),
      table_(new QTableView(this)), model_(new VariantModel(doc, this)), report_(new QPlainTextEdit(this)) {
  kind_->addItems({QStringLiteral("cleanup"), QStringLiteral("release"), QStringLiteral("probe"),
                   QStringLiteral("demand"), QStringLiteral("reset-peaks")});
  // Short enough to fit the field on a laptop; the whole syntax is the tooltip (and Help).
  point_->setPlaceholderText(tr("after:FILE:NAME, event:N, annotation:NAME:end"));
  const QString syntax = QString::fromUtf8(replay::pointSyntaxHelp().data(),
                                           static_cast<qsizetype>(replay::pointSyntaxHelp().size()));
  point_->setToolTip(syntax);
  kind_->setToolTip(syntax);
  edits_->setToolTip(syntax);
  edits_->setPlaceholderText(tr("One edit per line (KIND POINT); Add edit puts one here."));
  edits_->setMaximumHeight(80);
  settings_->setPlaceholderText(
      tr("allocator settings for the edited run, e.g. expandable_segments:True (empty: recorded)"));
  auto* add = new QPushButton(tr("Add edit"), this);
  auto* run = new QPushButton(tr("Run variant"), this);
  run->setDefault(true);
  sweep_->setToolTip(
      tr("Replay candidate cleanups (call-region entries and exits, annotations) and settings, ranked by the "
         "saving on an objective within a cap on empty_cache calls, cheapest first on ties"));
  sweep_->setEnabled(doc_->isModelled());
  auto* pointRow = new QHBoxLayout;
  pointRow->addWidget(kind_);
  pointRow->addWidget(point_, 1);
  pointRow->addWidget(add);
  auto* form = new QFormLayout;
  form->addRow(tr("Edit at a point"), pointRow);
  form->addRow(tr("Edits"), edits_);
  form->addRow(tr("Settings"), settings_);
  auto* buttons = new QHBoxLayout;
  buttons->addStretch(1);
  buttons->addWidget(sweep_);
  buttons->addWidget(run);
  form->addRow(buttons);

  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  report_->setReadOnly(true);
  report_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  report_->setLineWrapMode(QPlainTextEdit::WidgetWidth);  // never cut on the right
  report_->setPlaceholderText(tr("The report of the selected variant: one sentence first, then the figures."));

  auto* left = new QWidget(this);
  auto* leftLay = new QVBoxLayout(left);
  leftLay->setContentsMargins(0, 0, 0, 0);
  leftLay->addLayout(form);
  leftLay->addWidget(table_, 1);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(left);
  split->addWidget(report_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->addWidget(split);

  connect(add, &QPushButton::clicked, this, &WhatIfPanel::addEdit);
  connect(point_, &QLineEdit::returnPressed, this, &WhatIfPanel::addEdit);
  connect(run, &QPushButton::clicked, this, &WhatIfPanel::runPending);
  connect(sweep_, &QPushButton::clicked, this, &WhatIfPanel::startSweep);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& i) { doc_->selectVariant(i.isValid() ? i.row() : -1); });
  connect(doc_, &TraceDocument::variantSelected, this, &WhatIfPanel::showSelected);
  connect(doc_, &TraceDocument::variantsChanged, this, &WhatIfPanel::showSelected);
  connect(doc_, &TraceDocument::modelled, this, [this] {
    sweep_->setEnabled(true);
    QStringList names;
    for (std::size_t v = 0; v < doc_->model()->model->graph->size(); ++v) {
      const auto& f = doc_->model()->model->graph->function(v);
      if (f.allocations == 0 && f.events == 0) continue;
      names << QStringLiteral("after:") + QString::fromStdString(f.point_name)
            << QStringLiteral("before:") + QString::fromStdString(f.point_name);
    }
    auto* c = new QCompleter(names, point_);
    c->setCaseSensitivity(Qt::CaseInsensitive);
    c->setFilterMode(Qt::MatchContains);
    point_->setCompleter(c);
  });
}

void WhatIfPanel::startSweep() {
  auto* dialog = new SweepDialog(doc_, this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &SweepDialog::runCandidate, this, &WhatIfPanel::runVariant);
  dialog->show();
  dialog->start();
}

void WhatIfPanel::pickPoint(const QString& point) {
  point_->setText(point);
  point_->setFocus();
}

void WhatIfPanel::addEdit() {
  if (point_->text().trimmed().isEmpty()) return;
  edits_->appendPlainText(kind_->currentText() + QLatin1Char(' ') + point_->text().trimmed());
  point_->clear();
}

void WhatIfPanel::runVariant(const QStringList& edits, const QString& settings) {
  // What runs is what the boxes show (a sweep's candidate or the command line's edits too).
  edits_->setPlainText(edits.join(QLatin1Char('\n')));
  settings_->setText(settings);
  const int index = doc_->addVariant(edits, settings);
  doc_->selectVariant(index);
  table_->selectRow(index);
}

void WhatIfPanel::runPending() {
  if (!point_->text().trimmed().isEmpty()) addEdit();
  QStringList edits;
  for (const auto& line : edits_->toPlainText().split(QLatin1Char('\n'), Qt::SkipEmptyParts))
    if (!line.trimmed().isEmpty()) edits << line.trimmed();
  if (edits.isEmpty() && settings_->text().trimmed().isEmpty()) return;
  // The edits stay in the box (run again, or change one); the variants table keeps each run.
  runVariant(edits, settings_->text().trimmed());
}

QString WhatIfPanel::reportText() const { return report_->toPlainText(); }

void WhatIfPanel::setEditsText(const QString& text) { edits_->setPlainText(text); }

QString WhatIfPanel::editsText() const { return edits_->toPlainText(); }

void WhatIfPanel::showSelected() {
  const int sel = doc_->selectedVariant();
  if (sel < 0 || sel >= static_cast<int>(doc_->variants().size())) {
    report_->clear();
    return;
  }
  const Variant& v = doc_->variants()[static_cast<std::size_t>(sel)];
  if (table_->currentIndex().row() != sel) table_->selectRow(sel);
  report_->setPlainText(v.running           ? tr("running %1 ...").arg(v.name)
                        : v.error.isEmpty() ? v.report_text
                                            : tr("error: %1").arg(v.error));
}

}  // namespace reservoir::gui
