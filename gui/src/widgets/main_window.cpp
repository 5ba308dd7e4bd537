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

QSize openingSize(QSize wanted, QSize available) {
  if (!available.isValid() || available.isEmpty()) return wanted;
  const QSize frame(16, 48);  // borders and a title bar
  return wanted.boundedTo((available - frame).expandedTo(QSize(200, 200)));
}

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
  facts_view_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Interactive);
  // A trace's name elides at its end (its start tells traces apart; centred, it was clipped at both ends).
  facts_view_->horizontalHeader()->setTextElideMode(Qt::ElideRight);
  facts_view_->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  facts_view_->viewport()->installEventFilter(this);
  connect(facts_, &QAbstractItemModel::modelReset, this, &MainWindow::fitFactNames);
  connect(facts_, &QAbstractItemModel::rowsInserted, this, &MainWindow::fitFactNames);
  facts_view_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  facts_view_->setWordWrap(true);
  facts_view_->setAlternatingRowColors(true);
  auto* dock = facts_dock_ = new QDockWidget(tr("Trace facts and allocator settings"), this);
  dock->setObjectName(QStringLiteral("facts"));
  dock->setWidget(facts_view_);
  addDockWidget(Qt::RightDockWidgetArea, dock);
  resizeDocks({dock}, {kFactsWidth}, Qt::Horizontal);
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
    connect(page, &TraceWidget::openAgainRequested, this, [this, page] { openAgain(page); });
    connect(page, &TraceWidget::openOtherRequested, this, &MainWindow::openDialog);
    connect(doc, &TraceDocument::loaded, this, [this, doc] {
      refreshProgress();
      if (doc == currentDocument()) showStatusOf(doc);
    });
    connect(doc, &TraceDocument::modelled, this, &MainWindow::refreshProgress);
    connect(doc, &TraceDocument::cursorChanged, this, [this, doc](std::uint32_t e) {
      if (doc == currentDocument()) status_->setText(tr("%1: event %2").arg(doc->title()).arg(e));
    });
    doc->start();
  }
  updateCompareTab();
  if (!paths.isEmpty())
    tabs_->setCurrentIndex(static_cast<int>(pages_.size() - static_cast<std::size_t>(paths.size())));
  onCurrentTabChanged();
  refreshProgress();
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
  // Compare shows the facts of the traces it compares, side by side; a trace's page its own.
  if (tabs_->currentWidget() == compare_ && tabs_->indexOf(compare_) >= 0) {
    std::vector<TraceDocument*> shown;
    for (auto* d : docs_)
      if (!d->failed()) shown.push_back(d);
    facts_->setDocuments(shown);
    facts_dock_->setWindowTitle(tr("Trace facts, side by side"));
  } else {
    facts_->setDocument(currentDocument());
    facts_dock_->setWindowTitle(tr("Trace facts and allocator settings"));
  }
  if (currentTraceWidget()) showStatusOf(currentDocument());
  refreshProgress();
}

void MainWindow::showStatusOf(TraceDocument* doc) {
  if (!doc) return;
  switch (doc->stage()) {
    case TraceDocument::Stage::kFailed:
      status_->setText(tr("%1: could not open: %2").arg(doc->title(), doc->error()));
      break;
    case TraceDocument::Stage::kModelling:
      status_->setText(tr("%1: first view ready, %2 the allocator state...").arg(doc->title(), doc->stageWord()));
      break;
    default: status_->setText(tr("%1: %2").arg(doc->title(), doc->stageWord()));
  }
}

QString MainWindow::statusText() const { return status_->text(); }

void MainWindow::resizeEvent(QResizeEvent* event) {
  QMainWindow::resizeEvent(event);
  fitFactsDock();
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
  if (watched == facts_view_->viewport() && event->type() == QEvent::Resize) fitFactNames();
  return QMainWindow::eventFilter(watched, event);
}

void MainWindow::fitFactNames() {
  const int names = static_cast<QAbstractItemView*>(facts_view_)->sizeHintForColumn(0);  // public there
  const int values = std::max(facts_->columnCount() - 1, 1);
  const int view = facts_view_->viewport()->width();
  const int first = std::max(40, std::min(names, view * (values > 1 ? 30 : 45) / 100));
  facts_view_->setColumnWidth(0, first);
  // Compare's columns, a trace each, share the rest (the last one stretches over the remainder).
  for (int c = 1; c + 1 < facts_->columnCount(); ++c) facts_view_->setColumnWidth(c, (view - first) / values);
}

// A window sized before it is shown (as the app opens it) had its resize while the panel was
// not visible yet: the rule applies once more when it appears.
void MainWindow::showEvent(QShowEvent* event) {
  QMainWindow::showEvent(event);
  fitFactsDock();
}

void MainWindow::fitFactsDock() {
  // A window shrunk to a laptop's size squeezes the facts panel; when it grows again, give
  // the panel back the width it opened with (at most 30% of the window). A wider window
  // gives its extra width to the plot, not to the panel.
  // Below kNarrowWindow the panel also gives width back: at most a quarter of the window, so
  // that a laptop's 1280 px leaves the plot most of it.
  if (!facts_dock_ || !facts_dock_->isVisible() || facts_dock_->isFloating()) return;
  const bool narrow = width() < kNarrowWindow;
  const int want = std::min(kFactsWidth, narrow ? width() / 4 : width() * 3 / 10);
  if (facts_dock_->width() < want - 8 && width() >= 1000)
    resizeDocks({facts_dock_}, {want}, Qt::Horizontal);
  else if (narrow && facts_dock_->width() > want + 8)
    resizeDocks({facts_dock_}, {want}, Qt::Horizontal);
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

void MainWindow::openAgain(TraceWidget* page) {
  const QString path = page->document()->path();
  closeTab(tabs_->indexOf(page));
  openFiles({path});
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
  bar_of_.remove(doc);
  updateCompareTab();
  onCurrentTabChanged();
  w->deleteLater();
  doc->deleteLater();
}

TraceDocument* MainWindow::progressDocument() const {
  TraceDocument* current = currentDocument();
  if (current && current->loading()) return current;
  const auto it = std::find_if(docs_.begin(), docs_.end(), [](const TraceDocument* d) { return d->loading(); });
  return it == docs_.end() ? nullptr : *it;
}

void MainWindow::refreshProgress() {
  TraceDocument* doc = progressDocument();
  progress_->setVisible(doc != nullptr);
  cancel_->setVisible(doc != nullptr);
  if (!doc) return;
  // The document's own stage names the step, as the plot's header and the status bar do.
  progress_->setFormat(docs_.size() > 1 ? tr("%1: %2 %p%").arg(doc->title(), doc->stageWord())
                                        : tr("%1 %p%").arg(doc->stageWord()));
  double f = bar_of_.value(doc, 0.0);
  if (doc->stage() == TraceDocument::Stage::kModelling) f = std::max(f, 0.6);
  progress_->setValue(static_cast<int>(f * 1000));
}

void MainWindow::onProgress(TraceDocument* doc, int stage, double fraction) {
  // Reading is the first 60% of the bar, modelling the rest; a reading report that comes
  // after the first view was published counts as read.
  const bool modelling = doc->stage() != TraceDocument::Stage::kReading;
  const bool model_report = stage == static_cast<int>(replay::SessionStage::kModelling);
  bar_of_[doc] = !modelling ? 0.6 * fraction : 0.6 + 0.4 * (model_report ? fraction : 0.0);
  refreshProgress();
  if (doc == currentDocument()) showStatusOf(doc);
}

void MainWindow::onFailed(TraceDocument* doc, const QString& message) {
  refreshProgress();
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
  QMessageBox box(QMessageBox::Critical, tr("Cannot open the trace"), failureSummary(doc), QMessageBox::Ok, this);
  box.setInformativeText(message);
  box.exec();
}

QString MainWindow::failureSummary(const TraceDocument* doc) const {
  if (doc->errorHeadline().isEmpty()) return tr("Reservoir could not read %1.").arg(doc->path());
  return tr("%1: %2").arg(QFileInfo(doc->path()).fileName(), doc->errorHeadline());
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
