#include "widgets/main_window.h"

#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>

#include "app/trace_document.h"
#include "models/facts_model.h"
#include "widgets/compare_view.h"
#include "widgets/trace_widget.h"

namespace reservoir::gui {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), tabs_(new QTabWidget(this)), compare_(new CompareView(this)), facts_(new FactsModel(this)),
      facts_view_(new QTableView(this)), progress_(new QProgressBar(this)),
      cancel_(new QPushButton(tr("Cancel"), this)), status_(new QLabel(this)) {
  setWindowTitle(tr("Reservoir — CUDA caching allocator traces"));
  setAcceptDrops(true);
  tabs_->setDocumentMode(true);
  setCentralWidget(tabs_);
  facts_view_->setModel(facts_);
  facts_view_->verticalHeader()->hide();
  facts_view_->horizontalHeader()->setStretchLastSection(true);
  facts_view_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  facts_view_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  facts_view_->setWordWrap(true);
  facts_view_->setAlternatingRowColors(true);
  auto* dock = facts_dock_ = new QDockWidget(tr("Trace facts and allocator settings"), this);
  dock->setObjectName(QStringLiteral("facts"));
  dock->setWidget(facts_view_);
  addDockWidget(Qt::RightDockWidgetArea, dock);
  resizeDocks({dock}, {440}, Qt::Horizontal);
  buildMenus();
  buildStatusBar();
  connect(tabs_, &QTabWidget::currentChanged, this, &MainWindow::onCurrentTabChanged);
}

MainWindow::~MainWindow() = default;

void MainWindow::buildStatusBar() {
  progress_->setRange(0, 1000);
  progress_->setMaximumWidth(260);
  progress_->hide();
  cancel_->hide();
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_);
  connect(cancel_, &QPushButton::clicked, this, [this] {
    for (auto* d : docs_)
      if (!d->isModelled() && !d->failed()) d->cancel();
  });
}

void MainWindow::openFiles(const QStringList& paths) {
  for (const QString& path : paths) {
    auto* doc = new TraceDocument(path, this);
    docs_.push_back(doc);
    auto* page = new TraceWidget(doc, tabs_);
    pages_.push_back(page);
    tabs_->insertTab(static_cast<int>(pages_.size()) - 1, page, QFileInfo(path).fileName());
    connect(doc, &TraceDocument::progress, this, [this, doc](int stage, double f) { onProgress(doc, stage, f); });
    connect(doc, &TraceDocument::failedToLoad, this, [this, doc](const QString& m) { onFailed(doc, m); });
    connect(doc, &TraceDocument::loaded, this,
            [this, doc] { status_->setText(tr("%1: first view ready, modelling...").arg(doc->title())); });
    connect(doc, &TraceDocument::cursorChanged, this, [this, doc](std::uint32_t e) {
      if (doc == currentDocument()) status_->setText(tr("%1: event %2").arg(doc->title()).arg(e));
    });
    doc->start();
  }
  if (docs_.size() >= 2 && tabs_->indexOf(compare_) < 0) tabs_->addTab(compare_, tr("Compare"));
  compare_->setDocuments(docs_);
  if (!paths.isEmpty())
    tabs_->setCurrentIndex(static_cast<int>(pages_.size() - static_cast<std::size_t>(paths.size())));
  onCurrentTabChanged();
}

TraceWidget* MainWindow::traceWidget(int index) const {
  return index >= 0 && index < static_cast<int>(pages_.size()) ? pages_[static_cast<std::size_t>(index)] : nullptr;
}

TraceWidget* MainWindow::currentTraceWidget() const { return qobject_cast<TraceWidget*>(tabs_->currentWidget()); }

TraceDocument* MainWindow::currentDocument() const {
  auto* w = currentTraceWidget();
  return w ? w->document() : (docs_.empty() ? nullptr : docs_.front());
}

void MainWindow::showCompare() {
  if (tabs_->indexOf(compare_) < 0) tabs_->addTab(compare_, tr("Compare"));
  tabs_->setCurrentWidget(compare_);
}

void MainWindow::showTrace(int index) {
  if (auto* w = traceWidget(index)) tabs_->setCurrentWidget(w);
}

void MainWindow::setFactsVisible(bool on) { facts_dock_->setVisible(on); }

void MainWindow::onCurrentTabChanged() { facts_->setDocument(currentDocument()); }

void MainWindow::onProgress(TraceDocument* doc, int stage, double fraction) {
  const bool done = stage == static_cast<int>(replay::SessionStage::kDone);
  // Reading is the first 60% of the bar, modelling the rest.
  const double f = stage == 0 ? 0.6 * fraction : 0.6 + 0.4 * fraction;
  progress_->setVisible(!done);
  cancel_->setVisible(!done);
  progress_->setValue(static_cast<int>(f * 1000));
  progress_->setFormat(stage == 0 ? tr("reading %p%") : tr("modelling %p%"));
  status_->setText(done ? tr("%1: ready").arg(doc->title())
                        : tr("%1: %2").arg(doc->title(), stage == 0 ? tr("reading") : tr("modelling the allocator")));
}

void MainWindow::onFailed(TraceDocument* doc, const QString& message) {
  progress_->hide();
  cancel_->hide();
  errors_ << message;
  status_->setText(tr("%1: %2").arg(doc->title(), message));
  if (batch_) {
    qWarning("%s", qPrintable(message));
    return;
  }
  QMessageBox box(QMessageBox::Critical, tr("Cannot open the trace"),
                  tr("Reservoir could not read %1.").arg(doc->path()), QMessageBox::Ok, this);
  box.setInformativeText(message);
  box.exec();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  QStringList paths;
  for (const QUrl& url : event->mimeData()->urls())
    if (url.isLocalFile()) paths << url.toLocalFile();
  openFiles(paths);
}

}  // namespace reservoir::gui
