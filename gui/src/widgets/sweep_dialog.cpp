#include "widgets/sweep_dialog.h"

#include <QFutureWatcher>
#include <QHeaderView>
#include <QLabel>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "app/format.h"
#include "app/trace_document.h"

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

SweepDialog::SweepDialog(TraceDocument* doc, QWidget* parent)
    : QDialog(parent), doc_(doc), progress_(new QProgressBar(this)), status_(new QLabel(this)),
      table_(new QTableWidget(this)), use_(new QPushButton(tr("Run as a variant"), this)) {
  setWindowTitle(tr("Sweep: where should cleanup go?"));
  resize(900, 500);
  progress_->setRange(0, 1000);
  table_->setColumnCount(5);
  table_->setHorizontalHeaderLabels(
      {tr("candidate"), tr("peak reserved"), tr("saving"), tr("empty_cache calls"), tr("OOM")});
  table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  use_->setEnabled(false);
  auto* cancel = new QPushButton(tr("Cancel"), this);
  auto* lay = new QVBoxLayout(this);
  lay->addWidget(status_);
  lay->addWidget(progress_);
  lay->addWidget(table_, 1);
  auto* buttons = new QHBoxLayout;
  buttons->addStretch(1);
  buttons->addWidget(cancel);
  buttons->addWidget(use_);
  lay->addLayout(buttons);
  connect(cancel, &QPushButton::clicked, this, [this] {
    cancel_->store(true);
    if (!running_) reject();
  });
  connect(use_, &QPushButton::clicked, this, &SweepDialog::useSelected);
  connect(table_, &QTableWidget::itemSelectionChanged, this,
          [this] { use_->setEnabled(report_ && !table_->selectedItems().isEmpty()); });
}

SweepDialog::~SweepDialog() { cancel_->store(true); }

void SweepDialog::start() {
  const auto model = doc_->model();
  if (!model || running_) return;
  running_ = true;
  status_->setText(tr("Replaying candidate cleanups and settings..."));
  QPointer<SweepDialog> self(this);
  auto cancel = cancel_;
  replay::SweepOptions o;
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
  auto future = QtConcurrent::run([model, o, cancel] { return replay::runSweep(model->model->prepared, o); });
  auto* watcher = new QFutureWatcher<Expected<replay::SweepReport>>(this);
  connect(watcher, &QFutureWatcher<Expected<replay::SweepReport>>::finished, this, [this, watcher] {
    running_ = false;
    auto result = watcher->result();
    watcher->deleteLater();
    if (!result) {
      status_->setText(tr("Sweep failed: %1").arg(QString::fromStdString(result.message())));
      return;
    }
    report_ = std::make_shared<replay::SweepReport>(std::move(*result));
    showReport();
  });
  watcher->setFuture(future);
}

void SweepDialog::showReport() {
  progress_->setValue(1000);
  status_->setText(tr("%1 candidates evaluated in %2 s%3; objective: %4 (baseline %5)")
                       .arg(report_->evaluated)
                       .arg(report_->seconds, 0, 'f', 1)
                       .arg(report_->cancelled ? tr(" (cancelled)") : QString())
                       .arg(QString::fromStdString(report_->objective), sizeText(report_->baseline_peak_reserved)));
  table_->setRowCount(static_cast<int>(report_->candidates.size()));
  for (int r = 0; r < table_->rowCount(); ++r) {
    const auto& c = report_->candidates[static_cast<std::size_t>(r)];
    table_->setItem(r, 0, new QTableWidgetItem(QString::fromStdString(c.description)));
    table_->setItem(r, 1, new QTableWidgetItem(sizeText(c.peak_reserved)));
    table_->setItem(r, 2, new QTableWidgetItem(c.saving == 0 ? QStringLiteral("=") : sizeText(c.saving)));
    table_->setItem(r, 3, new QTableWidgetItem(QString::number(c.empty_cache_calls)));
    table_->setItem(r, 4, new QTableWidgetItem(c.oom ? tr("OOM") : tr("no")));
  }
}

void SweepDialog::useSelected() {
  const auto rows = table_->selectionModel()->selectedRows();
  if (!report_ || rows.isEmpty()) return;
  QStringList edits;
  QString settings;
  candidateToEdits(report_->candidates[static_cast<std::size_t>(rows.front().row())].edits, &edits, &settings);
  emit runCandidate(edits, settings);
  accept();
}

}  // namespace reservoir::gui
