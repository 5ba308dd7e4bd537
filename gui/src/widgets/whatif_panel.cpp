#include "widgets/whatif_panel.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QCompleter>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "models/stack_model.h"
#include "models/variant_model.h"
#include "models/whatif_figures_model.h"
#include "reservoir/replay/device_presets.h"
#include "reservoir/replay/point_help.h"
#include "reservoir/replay/report_text.h"
#include "widgets/compact_table.h"
#include "widgets/sweep_dialog.h"

namespace reservoir::gui {

namespace {

// "150,109,880,320": a device's total, every digit shown.
QString groupedDigits(std::uint64_t n) {
  QString digits = QString::number(n);
  for (qsizetype at = digits.size() - 3; at > 0; at -= 3) digits.insert(at, QLatin1Char(','));
  return digits;
}

// "H200 (150,109,880,320 B)", "A100 80GB (85,097,971,712 B, as observed)".
QString presetLabel(const replay::DevicePreset& p) {
  const QString name = QString::fromUtf8(p.name.data(), static_cast<qsizetype>(p.name.size()));
  const QString observed = p.source == replay::DevicePreset::Source::kObserved ? QStringLiteral(", as observed") : QString();
  return QStringLiteral("%1 (%2 B%3)").arg(name, groupedDigits(p.total), observed);
}

}  // namespace

WhatIfPanel::WhatIfPanel(TraceDocument* doc, QWidget* parent)
    : QWidget(parent), doc_(doc), kind_(new QComboBox(this)), point_(new QLineEdit(this)),
      edits_(new QPlainTextEdit(this)), settings_(new QLineEdit(this)), capacity_(new QComboBox(this)),
      overhead_(new QLineEdit(this)), fraction_on_(new QCheckBox(tr("Fraction"), this)),
      fraction_(new QDoubleSpinBox(this)), device_error_(new QLabel(this)),
      sweep_(new QPushButton(tr("Sweep..."), this)), model_(new VariantModel(doc, this)), table_(compactTable(model_, this, 150)),
      verdict_(new QLabel(this)), figures_(new WhatIfFiguresModel(this)), figures_view_(compactTable(figures_, this, 100)),
      stack_label_(new QLabel(this)), stack_(new StackModel(this)), copy_(new QPushButton(tr("Copy as text"), this)) {
  // The inputs scroll when the tab is short (a laptop's 720 px leave it about 330), so that the
  // variants table keeps a few rows under them instead of shrinking to its header.
  auto* inputs = new QWidget(this);
  auto* inputsLay = new QVBoxLayout(inputs);
  inputsLay->setContentsMargins(0, 0, 0, 0);
  inputsLay->addLayout(buildEditForm());
  inputsLay->addWidget(buildDeviceGroup());
  inputsLay->addStretch(1);
  auto* scroll = new QScrollArea(this);
  scroll->setObjectName(QStringLiteral("whatIfInputs"));
  scroll->setWidget(inputs);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  table_->setMinimumHeight(table_->horizontalHeader()->sizeHint().height() + 4 * table_->fontMetrics().height() * 3 / 2);
  auto* left = new QSplitter(Qt::Vertical, this);
  left->setChildrenCollapsible(false);
  left->addWidget(scroll);
  left->addWidget(table_);
  // The inputs take what they need and the variants table the rest (more rows on a tall screen).
  left->setStretchFactor(0, 0);
  left->setStretchFactor(1, 1);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(left);
  split->addWidget(buildReportPane());
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->addWidget(split);
  connectDocument();
}

QLayout* WhatIfPanel::buildEditForm() {
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
  // Two lines (it scrolls for more): a variant rarely has more edits, and on a laptop's short tab
  // the Device group stays in view.
  edits_->setMaximumHeight(edits_->fontMetrics().lineSpacing() * 2 + 12);
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
  // The buttons beside the edits box (one row less: on a laptop the Device group stays in view).
  auto* buttons = new QVBoxLayout;
  buttons->addWidget(run);
  buttons->addWidget(sweep_);
  buttons->addStretch(1);
  auto* editsRow = new QHBoxLayout;
  editsRow->addWidget(edits_, 1);
  editsRow->addLayout(buttons);
  auto* form = new QFormLayout;
  form->addRow(tr("Edit at a point"), pointRow);
  form->addRow(tr("Edits"), editsRow);
  connect(add, &QPushButton::clicked, this, &WhatIfPanel::addEdit);
  connect(point_, &QLineEdit::returnPressed, this, &WhatIfPanel::addEdit);
  connect(run, &QPushButton::clicked, this, &WhatIfPanel::runPending);
  connect(sweep_, &QPushButton::clicked, this, &WhatIfPanel::startSweep);
  return form;
}

// Capacity (presets by GPU name, or a size typed as the command line takes it), overhead, memory
// fraction and allocator settings of the edited run; the library checks them as they change.
QGroupBox* WhatIfPanel::buildDeviceGroup() {
  auto* group = new QGroupBox(tr("Device"), this);
  capacity_->setEditable(true);
  capacity_->setInsertPolicy(QComboBox::NoInsert);
  capacity_->addItem(tr("recorded (from out-of-memory events, else unlimited)"), QString());
  for (const auto& p : replay::devicePresets())
    capacity_->addItem(presetLabel(p), QString::fromStdString(replay::capacityText(p)));
  capacity_->setToolTip(tr("The device's memory as torch.cuda.mem_get_info() reports its total; or type a size "
                           "(141GiB, 80GB, 150109880320)"));
  overhead_->setPlaceholderText(tr("none, or 2GiB"));
  overhead_->setToolTip(tr("Device memory used outside PyTorch's cache (the CUDA context, NCCL's buffers, other "
                           "libraries), as a size: 2GiB, 1500MB; empty: none"));
  fraction_->setRange(0.0, 1.0);
  fraction_->setDecimals(4);
  fraction_->setSingleStep(0.05);
  fraction_->setValue(1.0);
  fraction_->setEnabled(false);
  fraction_on_->setToolTip(tr("The memory fraction (torch.cuda.set_per_process_memory_fraction) of the edited run; off: the recorded one"));
  fraction_->setToolTip(fraction_on_->toolTip());
  settings_->setPlaceholderText(tr("PYTORCH_CUDA_ALLOC_CONF: recorded"));
  settings_->setToolTip(tr("The whole PYTORCH_CUDA_ALLOC_CONF of the edited run, as torch parses it (it replaces "
                           "the recorded one), e.g. expandable_segments:True,max_split_size_mb:128; empty: the "
                           "recorded settings"));
  device_error_->setStyleSheet(QStringLiteral("color: #c80000"));
  device_error_->setWordWrap(true);
  device_error_->hide();
  // Two rows of two fields (capacity and overhead, settings and fraction): on a laptop's short
  // tab the whole group stays in view beside the edit form.
  auto* grid = new QGridLayout(group);
  grid->setContentsMargins(6, 2, 6, 2);
  grid->setVerticalSpacing(2);
  grid->addWidget(new QLabel(tr("Capacity"), group), 0, 0);
  grid->addWidget(capacity_, 0, 1);
  grid->addWidget(new QLabel(tr("Overhead"), group), 0, 2);
  grid->addWidget(overhead_, 0, 3);
  grid->addWidget(new QLabel(tr("Settings"), group), 1, 0);
  grid->addWidget(settings_, 1, 1);
  auto* fractionRow = new QHBoxLayout;
  fractionRow->addWidget(fraction_on_);
  fractionRow->addWidget(fraction_, 1);
  grid->addLayout(fractionRow, 1, 2, 1, 2);
  grid->addWidget(device_error_, 2, 0, 1, 4);
  grid->setColumnStretch(1, 3);
  grid->setColumnStretch(3, 1);
  connect(capacity_, &QComboBox::currentTextChanged, this, &WhatIfPanel::checkDevice);
  connect(overhead_, &QLineEdit::textChanged, this, &WhatIfPanel::checkDevice);
  connect(settings_, &QLineEdit::textChanged, this, &WhatIfPanel::checkDevice);
  connect(fraction_on_, &QCheckBox::toggled, fraction_, &QWidget::setEnabled);
  connect(fraction_on_, &QCheckBox::toggled, this, &WhatIfPanel::checkDevice);
  connect(fraction_, &QDoubleSpinBox::valueChanged, this, &WhatIfPanel::checkDevice);
  return group;
}

QWidget* WhatIfPanel::buildReportPane() {
  auto* pane = new QWidget(this);
  verdict_->setWordWrap(true);
  verdict_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  verdict_->setText(tr("The report of the selected variant: one sentence first, then the figures."));
  figures_view_->setSelectionMode(QAbstractItemView::NoSelection);

  stack_label_->setWordWrap(true);
  auto* stackView = compactTable(stack_, pane, 120);
  copy_->setToolTip(tr("The report as the command line prints it, to the clipboard"));
  copy_->setEnabled(false);
  auto* copyRow = new QHBoxLayout;
  copyRow->addStretch(1);
  copyRow->addWidget(copy_);
  auto* lay = new QVBoxLayout(pane);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->addWidget(verdict_);
  lay->addWidget(figures_view_, 2);
  lay->addWidget(stack_label_);
  lay->addWidget(stackView, 1);
  lay->addLayout(copyRow);
  connect(copy_, &QPushButton::clicked, this, &WhatIfPanel::copyReportText);
  return pane;
}

void WhatIfPanel::connectDocument() {
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& i) { doc_->selectVariant(i.isValid() ? i.row() : -1); });
  // Only a change of selection restores the inputs: a variant that finishes while the user types
  // the next one leaves the fields alone.
  connect(doc_, &TraceDocument::variantSelected, this, [this] {
    const int sel = doc_->selectedVariant();
    if (sel >= 0 && sel < static_cast<int>(doc_->variants().size()))
      restoreInputs(doc_->variants()[static_cast<std::size_t>(sel)]);
    showSelected();
  });
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

VariantDevice WhatIfPanel::device() const {
  VariantDevice d;
  const int i = capacity_->currentIndex();
  // A preset's text is its label; what the library is given is the preset's bytes.
  d.capacity = i >= 0 && capacity_->currentText() == capacity_->itemText(i) ? capacity_->itemData(i).toString()
                                                                             : capacity_->currentText().trimmed();
  d.overhead = overhead_->text().trimmed();
  if (fraction_on_->isChecked()) d.fraction = fraction_->value();
  return d;
}

// The library's verdict on the Device group's fields, as they change (the variant would fail so).
void WhatIfPanel::checkDevice() {
  const auto options = makeWhatIfOptions({}, settings_->text().trimmed(), device());
  device_error_->setText(options ? QString() : QString::fromStdString(options.message()));
  device_error_->setVisible(!options);
}

// The Device group in words for the sweep dialog, as a variant's name gives them ("settings
// expandable_segments:True, capacity 80GiB"), or "as recorded".
QString WhatIfPanel::deviceWords() const {
  const QString words = variantName({}, settings_->text().trimmed(), device());
  return words.isEmpty() ? tr("as recorded") : words;
}

// The sweep runs on the Device group's device: "does it fit, and with which cleanup" in one go.
void WhatIfPanel::startSweep() {
  const QString settings = settings_->text().trimmed();
  const auto options = makeWhatIfOptions({}, settings, device());
  if (!options) {
    device_error_->setText(QString::fromStdString(options.message()));
    device_error_->setVisible(true);
    return;
  }
  auto* dialog = new SweepDialog(doc_, this);
  dialog->setDevice(*options, deviceWords(), settings);
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
  const int index = doc_->addVariant(edits, settings, device());
  doc_->selectVariant(index);
  table_->selectRow(index);
}

void WhatIfPanel::runPending() {
  if (!point_->text().trimmed().isEmpty()) addEdit();
  QStringList edits;
  for (const auto& line : edits_->toPlainText().split(QLatin1Char('\n'), Qt::SkipEmptyParts))
    if (!line.trimmed().isEmpty()) edits << line.trimmed();
  const VariantDevice d = device();
  if (edits.isEmpty() && settings_->text().trimmed().isEmpty() && d.capacity.isEmpty() && d.overhead.isEmpty() &&
      !d.fraction)
    return;
  // The edits stay in the box (run again, or change one); the variants table keeps each run.
  runVariant(edits, settings_->text().trimmed());
}

QString WhatIfPanel::reportText() const {
  const int sel = doc_->selectedVariant();
  if (sel < 0 || sel >= static_cast<int>(doc_->variants().size())) return {};
  return doc_->variants()[static_cast<std::size_t>(sel)].report_text;
}

void WhatIfPanel::copyReportText() const { QApplication::clipboard()->setText(reportText()); }

void WhatIfPanel::setEditsText(const QString& text) { edits_->setPlainText(text); }

QString WhatIfPanel::editsText() const { return edits_->toPlainText(); }

void WhatIfPanel::showSelected() {
  const int sel = doc_->selectedVariant();
  if (sel < 0 || sel >= static_cast<int>(doc_->variants().size())) {
    verdict_->clear();
    figures_->setReport(nullptr);
    stack_->setStack(nullptr, StackId());
    stack_label_->clear();
    copy_->setEnabled(false);
    return;
  }
  const Variant& v = doc_->variants()[static_cast<std::size_t>(sel)];
  if (table_->currentIndex().row() != sel) table_->selectRow(sel);
  showReport(v);
}

// The selected variant's edits, settings and device back in their fields: what is shown is what
// made the report, and running again after a change runs that change.
void WhatIfPanel::restoreInputs(const Variant& v) {
  edits_->setPlainText(v.edits.join(QLatin1Char('\n')));
  settings_->setText(v.settings);
  const int preset = v.device.capacity.isEmpty() ? 0 : capacity_->findData(v.device.capacity);
  if (preset >= 0)
    capacity_->setCurrentIndex(preset);
  else
    capacity_->setEditText(v.device.capacity);
  overhead_->setText(v.device.overhead);
  fraction_on_->setChecked(v.device.fraction.has_value());
  if (v.device.fraction) fraction_->setValue(*v.device.fraction);
}

// The verdict (the library's sentence), the figures, and the stack of the what-if peak or of
// its first failed malloc.
void WhatIfPanel::showReport(const Variant& v) {
  figures_->setReport(v.report);
  copy_->setEnabled(v.report != nullptr);
  verdict_->setText(v.running           ? tr("running %1 ...").arg(v.name)
                    : !v.error.isEmpty() ? tr("error: %1").arg(v.error)
                    : v.report           ? QString::fromStdString(replay::whatIfVerdict(*v.report))
                                         : QString());
  if (!v.report) {
    stack_->setStack(nullptr, StackId());
    stack_label_->clear();
    return;
  }
  const auto& w = v.report->whatif;
  stack_->setStack(doc_->recorded(), w.oom ? w.oom->stack : w.peak_reserved.stack);
  stack_label_->setText(w.oom ? tr("The edited run first runs out of memory at event %1, in:").arg(w.oom->event)
                              : tr("The edited run's peak reserved is reached at event %1, in:")
                                    .arg(w.peak_reserved.event));
}

}  // namespace reservoir::gui
