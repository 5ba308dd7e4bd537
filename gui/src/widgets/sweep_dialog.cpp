#include "widgets/sweep_dialog.h"

#include <QApplication>
#include <algorithm>
#include <QClipboard>
#include <QComboBox>
#include <QFutureWatcher>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "app/format.h"
#include "app/trace_document.h"
#include "reservoir/replay/report_text.h"

namespace reservoir::gui {

void candidateToEdits(const std::vector<std::string>& flags, QStringList* edits, QString* settings) {
  for (std::size_t i = 0; i + 1 < flags.size(); i += 2) {
    const QString flag = QString::fromStdString(flags[i]);
    const QString value = QString::fromStdString(flags[i + 1]);
    if (flag == QLatin1String("--set") || flag == QLatin1String("--settings"))
      *settings = value;
    else if (flag.startsWith(QLatin1String("--")))
      *edits << flag.mid(2) + QLatin1Char(' ') + value;
  }
}

namespace {

enum Column { kCandidate, kSaving, kPeak, kCalls, kPerStep, kPriceStep, kPrice, kPareto, kOom, kEdit, kColumns };

// Inserted calls per training step in the library's words ("2 per step", "1 every 150 steps").
QString perStepText(const std::optional<double>& per_step) {
  return per_step ? QString::fromStdString(replay::perStepWords(*per_step)) : QStringLiteral("-");
}

// A cell that sorts by a number while showing text.
class NumberItem : public QTableWidgetItem {
 public:
  NumberItem(const QString& text, double value, int rank) : QTableWidgetItem(text), value_(value), rank_(rank) {
    setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  }
  bool operator<(const QTableWidgetItem& other) const override {
    const auto* o = dynamic_cast<const NumberItem*>(&other);
    if (!o) return QTableWidgetItem::operator<(other);
    return value_ != o->value_ ? value_ < o->value_ : rank_ < o->rank_;
  }

 private:
  double value_;
  int rank_;
};

constexpr int kRankRole = Qt::UserRole + 1;

}  // namespace

QSize sweepDialogSize(QSize window) {
  const QSize laptop(1200, 560);
  if (!window.isValid()) return laptop;
  return laptop.expandedTo(window * 3 / 4);
}

SweepDialog::SweepDialog(TraceDocument* doc, QWidget* parent)
    : QDialog(parent), doc_(doc), objective_(new QComboBox(this)), target_(new QLineEdit(this)),
      progress_(new QProgressBar(this)), status_(new QLabel(this)), device_label_(new QLabel(this)), table_(new QTableWidget(this)),
      use_(new QPushButton(tr("Run as a variant"), this)), copy_(new QPushButton(tr("Copy edit"), this)), close_(new QPushButton(tr("Close"), this)),
      start_(new QPushButton(tr("Start"), this)) {
  setWindowTitle(tr("Sweep: where should cleanup go?"));
  resize(sweepDialogSize(parent ? parent->window()->size() : QSize()));
  objective_->addItem(tr("lowest peak reserved"), QStringLiteral("peak"));
  objective_->addItem(tr("lowest reserved at a point"), QStringLiteral("reserved"));
  objective_->addItem(tr("lowest peak inside an annotation"), QStringLiteral("peak-in"));
  target_->setPlaceholderText(tr("the point (after:state_dict_loader.py:load) or annotation name"));
  target_->setEnabled(false);
  connect(objective_, &QComboBox::currentIndexChanged, this,
          [this](int i) { target_->setEnabled(objective_->itemData(i).toString() != QLatin1String("peak")); });
  progress_->setRange(0, 1000);
  status_->setWordWrap(true);
  table_->setColumnCount(kColumns);
  // Short headers (what they count is in their tooltips): at 1280 px the Pareto, OOM and edit
  // columns stay in view beside the candidate.
  table_->setHorizontalHeaderLabels({tr("candidate"), tr("saving"), tr("peak reserved"), tr("calls/run"),
                                     tr("calls/step"), tr("price/step"), tr("price/run"), tr("Pareto"), tr("OOM"),
                                     tr("edit")});
  table_->horizontalHeaderItem(kCalls)->setToolTip(tr("empty_cache calls: those the candidate inserts in the whole trace"));
  table_->horizontalHeaderItem(kPriceStep)->setToolTip(
      tr("Price per step: the time one training step's empty_cache calls cost (the whole run's price over its steps)"));
  table_->horizontalHeaderItem(kPareto)->setToolTip(
      tr("On the Pareto front: no other candidate saves as much for less"));
  table_->horizontalHeaderItem(kEdit)->setToolTip(
      tr("The candidate as reservoir whatif / gate flags (whole on hover); select a row and press Copy edit"));
  table_->horizontalHeaderItem(kPrice)->setToolTip(
      tr("Price of the run: the time the candidate's empty_cache calls cost over the whole trace (all its calls together)"));
  table_->horizontalHeaderItem(kPerStep)->setToolTip(
      tr("empty_cache calls per training step: those inserted over the training steps the trace shows"));
  table_->horizontalHeaderItem(kCandidate)->setToolTip(tr("What the candidate changes; hover a row for all of it"));
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  // The candidate keeps a third of the table (fitColumns), the figures fit their contents, and
  // the edit (often a long quoted point) takes what is left; both elide, whole in their tooltips.
  table_->horizontalHeader()->setSectionResizeMode(kCandidate, QHeaderView::Interactive);
  table_->viewport()->installEventFilter(this);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setTextElideMode(Qt::ElideMiddle);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->hide();
  use_->setEnabled(false);
  copy_->setEnabled(false);
  copy_->setToolTip(tr("The selected candidate's edit as command-line flags, to the clipboard"));
  auto* objectiveRow = new QHBoxLayout;
  objectiveRow->addWidget(new QLabel(tr("Objective:"), this));
  objectiveRow->addWidget(objective_);
  objectiveRow->addWidget(target_, 1);
  objectiveRow->addWidget(start_);
  auto* lay = new QVBoxLayout(this);
  lay->addLayout(objectiveRow);
  device_label_->setWordWrap(true);
  device_label_->setText(tr("Device: as recorded (set capacity, overhead, fraction or settings in the What-if "
                            "panel's Device group)"));
  lay->addWidget(device_label_);
  lay->addWidget(status_);
  lay->addWidget(progress_);
  lay->addWidget(table_, 1);
  auto* buttons = new QHBoxLayout;
  buttons->addStretch(1);
  buttons->addWidget(copy_);
  buttons->addWidget(close_);
  buttons->addWidget(use_);
  lay->addLayout(buttons);
  connect(start_, &QPushButton::clicked, this, &SweepDialog::start);
  connect(close_, &QPushButton::clicked, this, [this] {
    if (running_)
      this->cancel();
    else
      reject();
  });
  connect(use_, &QPushButton::clicked, this, &SweepDialog::useSelected);
  connect(copy_, &QPushButton::clicked, this, [this] { QApplication::clipboard()->setText(selectedEdit()); });
  connect(table_, &QTableWidget::itemSelectionChanged, this, [this] {
    use_->setEnabled(report_ && !table_->selectedItems().isEmpty());
    copy_->setEnabled(!selectedEdit().isEmpty());
  });
  connect(table_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) { runRow(row); });
}

SweepDialog::~SweepDialog() { cancel_->store(true); }

int SweepDialog::candidateRoom() const {
  // What the figures leave: the edit column keeps kMinEditWidth (it elides, whole on hover).
  int others = 0;
  for (int c = 0; c < kColumns; ++c)
    if (c != kCandidate && c != kEdit) others += table_->horizontalHeader()->sectionSize(c);
  return table_->viewport()->width() - others - kMinEditWidth;
}

void SweepDialog::fitColumns() {
  // A third of the table, but never so much that the table scrolls sideways.
  const int third = table_->viewport()->width() * 35 / 100;
  table_->setColumnWidth(kCandidate, std::max(kMinCandidateWidth, std::min(third, candidateRoom())));
}

void SweepDialog::resizeEvent(QResizeEvent* event) {
  QDialog::resizeEvent(event);
  fitColumns();
}

// The table's own resizes too: the layout sizes it after the dialog's resize, so the share taken
// then was of a viewport not yet laid out (200 px of a 1160 px table).
bool SweepDialog::eventFilter(QObject* watched, QEvent* event) {
  if (watched == table_->viewport() && event->type() == QEvent::Resize) fitColumns();
  return QDialog::eventFilter(watched, event);
}

void SweepDialog::showRunning(bool running) {
  // While rows arrive the figures' columns keep their widths: sized to their contents, each
  // arrival had every column measure every row again (2 s of a 48 ms sweep for 100 rows); they
  // are sized once, to the ranked table, when it is done.
  for (int c = 0; c < kColumns; ++c)
    if (c != kCandidate)
      table_->horizontalHeader()->setSectionResizeMode(c, running ? QHeaderView::Interactive
                                                                  : QHeaderView::ResizeToContents);
  close_->setText(running ? tr("Cancel") : tr("Close"));
  start_->setText(running || !report_ ? tr("Start") : tr("Run again"));
  start_->setEnabled(!running);
  // The figures' columns were sized to the ranked table: the candidate's share follows them.
  if (!running) QTimer::singleShot(0, this, [this] { fitColumns(); });
}

void SweepDialog::cancel() {
  cancel_->store(true);
  status_->setText(tr("Cancelling: finishing the candidates already started..."));
}

void SweepDialog::setObjective(const QString& text) {
  const QString kind = text.startsWith(QLatin1String("peak-in:"))    ? QStringLiteral("peak-in")
                       : text.startsWith(QLatin1String("reserved:")) ? QStringLiteral("reserved")
                                                                     : QStringLiteral("peak");
  objective_->setCurrentIndex(objective_->findData(kind));
  target_->setText(kind == QLatin1String("peak") ? QString() : text.mid(text.indexOf(QLatin1Char(':')) + 1));
}

QString SweepDialog::objectiveText() const {
  const QString kind = objective_->currentData().toString();
  return kind == QLatin1String("peak") ? kind : kind + QLatin1Char(':') + target_->text().trimmed();
}

QString SweepDialog::statusText() const { return status_->text(); }

void SweepDialog::setDevice(const replay::EditedRunOptions& device, const QString& words, const QString& settings) {
  device_ = device;
  device_settings_ = settings;
  device_label_->setText(tr("Device: %1").arg(words));
}

QString SweepDialog::deviceText() const { return device_label_->text(); }

void SweepDialog::start() {
  const auto model = doc_->model();
  if (!model || running_) return;
  auto objective = replay::parseSweepObjective(objectiveText().toStdString());
  if (!objective) {
    status_->setText(tr("The objective: %1").arg(QString::fromStdString(objective.message())));
    return;
  }
  running_ = true;
  showRunning(true);
  report_.reset();
  use_->setEnabled(false);
  cancel_->store(false);
  progress_->setValue(0);
  status_->setText(tr("Replaying candidate cleanups and settings..."));
  QPointer<SweepDialog> self(this);
  auto cancel = cancel_;
  replay::SweepOptions o;
  static_cast<replay::EditedRunOptions&>(o) = device_;
  o.objective = std::move(*objective);
  o.jobs = 1;  // keep a core for the GUI
  o.cancel = cancel.get();
  o.progress = [self](std::size_t done, std::size_t total) {
    const int v = total ? static_cast<int>(1000.0 * static_cast<double>(done) / static_cast<double>(total)) : 0;
    QMetaObject::invokeMethod(
        self,
        [self, v] {
          if (self) self->progress_->setValue(v);
        },
        Qt::QueuedConnection);
  };
  arrived_ = 0;
  table_->setSortingEnabled(false);
  table_->setRowCount(0);
  o.on_candidate = [self](const replay::SweepCandidate& c) {
    QMetaObject::invokeMethod(
        self,
        [self, c] {
          if (self) self->addArrived(c);
        },
        Qt::QueuedConnection);
  };
  auto future = QtConcurrent::run([model, o, cancel] { return replay::runSweep(model->model->prepared, o); });
  auto* watcher = new QFutureWatcher<Expected<replay::SweepReport>>(this);
  connect(watcher, &QFutureWatcher<Expected<replay::SweepReport>>::finished, this, [this, watcher] {
    running_ = false;
    auto result = watcher->result();
    watcher->deleteLater();
    if (!result) {
      status_->setText(tr("The sweep failed: %1").arg(QString::fromStdString(result.message())));
    } else {
      report_ = std::make_shared<replay::SweepReport>(std::move(*result));
      showReport();
    }
    showRunning(false);
    emit finished();
  });
  watcher->setFuture(future);
}

void SweepDialog::showReport() {
  const auto& rep = *report_;
  // After a cancel the bar keeps showing how much was replayed, not 100%.
  if (!rep.cancelled) progress_->setValue(1000);
  QString cap = rep.max_calls ? tr("at most %1 empty_cache call(s) in the trace, %2")
                                    .arg(*rep.max_calls)
                                    .arg(QString::fromStdString(rep.max_calls_source))
                              : QString::fromStdString(rep.max_calls_source);
  const QString steps = rep.steps ? (rep.steps->count == 1 ? tr("1 training step (%1)")
                                                           : tr("%1 training steps (%2)").arg(rep.steps->count))
                                        .arg(QString::fromStdString(rep.steps->source))
                                  : tr("training steps unknown");
  // "0.0 s" for a small trace's 30 ms read as nothing done: the same units as the Events table's times.
  // "replays": the candidates whose runs are the same share one (SweepReport::replays).
  status_->setText(tr("%1 candidates (%2 replays) in %3%4. Minimizing %5 (now %6); %7; %8. Double-click a row to run "
                      "it as a variant.")
                       .arg(rep.evaluated)
                       .arg(rep.replays)
                       .arg(timeText(static_cast<std::int64_t>(rep.seconds * 1e6)))
                       .arg(rep.cancelled ? tr(" (cancelled: the rest were not replayed)") : QString())
                       .arg(QString::fromStdString(rep.objective), sizeText(rep.baseline_objective), steps, cap));
  table_->setSortingEnabled(false);
  table_->setRowCount(static_cast<int>(rep.candidates.size()));
  for (int r = 0; r < table_->rowCount(); ++r) fillRow(r, rep.candidates[static_cast<std::size_t>(r)], r);
  // In rank order until a header is clicked.
  table_->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
  table_->setSortingEnabled(true);
}

void SweepDialog::fillRow(int r, const replay::SweepCandidate& c, int rank) {
  auto* name = new QTableWidgetItem(QString::fromStdString(c.description) +
                                    (c.within_cap ? QString() : tr("  (over the call cap)")));
  name->setData(kRankRole, rank);
  name->setToolTip(name->text());
  table_->setItem(r, kCandidate, name);
  const QString saving = c.saving > 0 ? sizeText(c.saving) : c.saving == 0 ? tr("none") : tr("worse");
  table_->setItem(r, kSaving, new NumberItem(saving, static_cast<double>(c.saving), r));
  table_->setItem(r, kPeak, new NumberItem(sizeText(c.peak_reserved), static_cast<double>(c.peak_reserved), r));
  table_->setItem(r, kCalls,
                  new NumberItem(QString::number(c.empty_cache_calls), static_cast<double>(c.empty_cache_calls), r));
  table_->setItem(r, kPerStep, new NumberItem(perStepText(c.calls_per_step), c.calls_per_step.value_or(0.0), r));
  const auto& step_price = c.price_per_step_seconds;  // the library's (0 for settings, none without steps)
  table_->setItem(r, kPriceStep,
                  new NumberItem(step_price ? QString::fromStdString(replay::priceText(*step_price)) : tr("-"),
                                 step_price.value_or(0.0), r));
  table_->setItem(r, kPrice,
                  new NumberItem(QString::fromStdString(replay::priceText(c.price_seconds)), c.price_seconds, r));
  // While the sweep runs the front is not known yet (it needs every candidate).
  table_->setItem(r, kPareto, new QTableWidgetItem(rank >= 0 && c.pareto ? tr("yes") : QString()));
  table_->setItem(r, kOom, new QTableWidgetItem(c.oom ? tr("OOM") : tr("no")));
  auto* edit = new QTableWidgetItem(QString::fromStdString(replay::shellWords(c.edits)));
  edit->setToolTip(edit->text());
  table_->setItem(r, kEdit, edit);
}

QString SweepDialog::selectedEdit() const {
  const auto rows = table_->selectionModel()->selectedRows();
  if (rows.isEmpty()) return {};
  const auto* item = table_->item(rows.front().row(), kEdit);
  return item ? item->text() : QString();
}

// While the sweep runs: each candidate as it is replayed, in arrival order (the final
// ranking replaces them); they cannot be run until the sweep ends.
void SweepDialog::addArrived(const replay::SweepCandidate& c) {
  if (!running_) return;
  const int r = table_->rowCount();
  table_->setRowCount(r + 1);
  fillRow(r, c, -1);
  ++arrived_;
  status_->setText(
      tr("Replaying candidate cleanups and settings: %1 so far (they are ranked when all are done)").arg(arrived_));
  emit candidateShown(r + 1);
}

void SweepDialog::runRow(int row) {
  if (!report_ || row < 0 || row >= table_->rowCount()) return;
  const int rank = table_->item(row, kCandidate)->data(kRankRole).toInt();
  if (rank < 0 || rank >= static_cast<int>(report_->candidates.size())) return;
  QStringList edits;
  QString settings;
  candidateToEdits(report_->candidates[static_cast<std::size_t>(rank)].edits, &edits, &settings);
  if (settings.isEmpty()) settings = device_settings_;
  emit runCandidate(edits, settings);
  accept();
}

void SweepDialog::useSelected() {
  const auto rows = table_->selectionModel()->selectedRows();
  if (rows.isEmpty()) return;
  runRow(rows.front().row());
}

}  // namespace reservoir::gui
