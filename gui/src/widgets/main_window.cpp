#include "widgets/main_window.h"

#include <algorithm>

#include <QCloseEvent>
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
  tabs_->setTabsClosable(true);
  connect(tabs_, &QTabWidget::tabCloseRequested, this, &MainWindow::closeTab);
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
  updateCompareTab();
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
  onCurrentTabChanged();
}

void MainWindow::setFactsVisible(bool on) { facts_dock_->setVisible(on); }

void MainWindow::onCurrentTabChanged() {
  facts_->setDocument(currentDocument());
  if (currentTraceWidget()) showStatusOf(currentDocument());
}

void MainWindow::showStatusOf(TraceDocument* doc) {
  if (!doc) return;
  status_->setText(doc->failed()       ? tr("%1: could not open: %2").arg(doc->title(), doc->error())
                   : doc->isModelled() ? tr("%1: ready").arg(doc->title())
                   : doc->recorded()   ? tr("%1: modelling the allocator").arg(doc->title())
                                       : tr("%1: reading").arg(doc->title()));
}

QString MainWindow::statusText() const { return status_->text(); }

void MainWindow::resizeEvent(QResizeEvent* event) {
  QMainWindow::resizeEvent(event);
  // A window shrunk to a laptop's size squeezes the facts panel; when it grows again, give
  // the panel back a width that shows its values (a quarter of the window, 320-480 px).
  if (!facts_dock_ || !facts_dock_->isVisible() || facts_dock_->isFloating()) return;
  const int want = std::clamp(width() / 4, 320, 480);
  if (facts_dock_->width() < want && width() >= 1000) resizeDocks({facts_dock_}, {want}, Qt::Horizontal);
}

void MainWindow::updateCompareTab() {
  std::vector<TraceDocument*> ok;
  for (auto* d : docs_)
    if (!d->failed()) ok.push_back(d);
  const bool shown = tabs_->indexOf(compare_) >= 0;
  if (ok.size() >= 2 && !shown) tabs_->addTab(compare_, tr("Compare"));
  if (ok.size() < 2 && shown) tabs_->removeTab(tabs_->indexOf(compare_));
  compare_->setDocuments(ok);
}

void MainWindow::closeTab(int index) {
  QWidget* w = tabs_->widget(index);
  if (!w) return;
  if (w == compare_) {
    tabs_->removeTab(index);
    return;
  }
  const auto it = std::find(pages_.begin(), pages_.end(), w);
  if (it == pages_.end()) return;
  const auto k = static_cast<std::size_t>(it - pages_.begin());
  TraceDocument* doc = docs_[k];
  doc->cancel();
  tabs_->removeTab(index);
  pages_.erase(it);
  docs_.erase(docs_.begin() + static_cast<std::ptrdiff_t>(k));
  updateCompareTab();
  onCurrentTabChanged();
  w->deleteLater();
  doc->deleteLater();
}

void MainWindow::onProgress(TraceDocument* doc, int stage, double fraction) {
  const bool done = stage == static_cast<int>(replay::SessionStage::kDone);
  // Reading is the first 60% of the bar, modelling the rest.
  const double f = stage == 0 ? 0.6 * fraction : 0.6 + 0.4 * fraction;
  progress_->setVisible(!done);
  cancel_->setVisible(!done);
  progress_->setValue(static_cast<int>(f * 1000));
  progress_->setFormat(stage == 0 ? tr("reading %p%") : tr("modelling %p%"));
  if (doc == currentDocument() || done) showStatusOf(doc);
}

void MainWindow::onFailed(TraceDocument* doc, const QString& message) {
  progress_->hide();
  cancel_->hide();
  errors_ << message;
  // The tab says so at once (its page shows the message), and no comparison includes it.
  const auto it = std::find(docs_.begin(), docs_.end(), doc);
  if (it != docs_.end()) {
    QWidget* page = pages_[static_cast<std::size_t>(it - docs_.begin())];
    const int tab = tabs_->indexOf(page);
    tabs_->setTabText(tab, tr("%1 (could not open)").arg(doc->title()));
    tabs_->setTabToolTip(tab, message);
    page->update();
    for (auto* child : page->findChildren<QWidget*>()) child->update();
  }
  updateCompareTab();
  if (doc == currentDocument()) showStatusOf(doc);  // else its tab says so
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

QString MainWindow::unsavedWork() const {
  std::size_t variants = 0;
  for (const auto* d : docs_) variants += d->variants().size();
  if (variants == 0) return {};
  return tr("%n what-if variant(s)", nullptr, static_cast<int>(variants));
}

void MainWindow::closeEvent(QCloseEvent* event) {
  const QString lost = unsavedWork();
  if (!lost.isEmpty()) {
    const QString question = tr("Quit and lose %1? (File > Export what-if keeps a variant as a snapshot.)").arg(lost);
    const bool yes = confirm_quit_ ? confirm_quit_(question)
                     : batch_      ? true
                                   : QMessageBox::question(this, tr("Quit"), question) == QMessageBox::Yes;
    if (!yes) {
      event->ignore();
      return;
    }
  }
  QMainWindow::closeEvent(event);
}

}  // namespace reservoir::gui
