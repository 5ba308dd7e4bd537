// MainWindow's menus, keyboard navigation and export.
#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QImage>
#include <QKeySequence>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QPainter>
#include <QPlainTextEdit>
#include <QVBoxLayout>

#ifdef RESERVOIR_GUI_HAVE_SVG
#include <QSvgGenerator>
#endif

#include "app/export_snapshot.h"
#include "app/trace_document.h"
#include "reservoir/replay/export.h"
#include "reservoir/replay/point_help.h"
#include "widgets/compare_view.h"
#include "widgets/main_window.h"
#include "widgets/timeline_view.h"
#include "widgets/trace_widget.h"

namespace reservoir::gui {

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open snapshots..."), QKeySequence::Open, this, &MainWindow::openDialog);
  file->addAction(tr("&Export plot (PNG/SVG)..."), QKeySequence(tr("Ctrl+E")), this, &MainWindow::exportDialog);
  QAction* snap = file->addAction(tr("Export what-if as &snapshot..."), this, &MainWindow::exportSnapshotDialog);
  snap->setToolTip(
      tr("The selected what-if variant's modelled run as a snapshot pickle for memory_viz (with no variant "
         "selected, the unedited run: it asks first)"));
  snap->setStatusTip(snap->toolTip());
  file->setToolTipsVisible(true);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  QAction* time = view->addAction(tr("&Time axis"));
  time->setCheckable(true);
  time->setShortcut(QKeySequence(tr("Ctrl+T")));
  connect(time, &QAction::toggled, this, [this](bool on) {
    for (auto* p : pages_) p->timeline()->setTimeAxis(on);
  });
  QAction* bands = view->addAction(tr("Live-block &bands"));
  bands->setCheckable(true);
  bands->setChecked(true);
  connect(bands, &QAction::toggled, this, [this](bool on) {
    for (auto* p : pages_) p->timeline()->setShowBands(on);
  });
  view->addAction(tr("Zoom &in"), QKeySequence(tr("Ctrl+=")), this, [this] {
    if (auto* w = currentTraceWidget()) w->timeline()->zoomBy(0.5);
  });
  view->addAction(tr("Zoom &out"), QKeySequence(tr("Ctrl+-")), this, [this] {
    if (auto* w = currentTraceWidget()) w->timeline()->zoomBy(2.0);
  });
  view->addAction(tr("&Reset zoom"), QKeySequence(tr("Ctrl+0")), this, [this] {
    if (auto* w = currentTraceWidget()) w->timeline()->resetZoom();
  });
  view->addAction(tr("&Compare traces"), QKeySequence(tr("Ctrl+K")), this, &MainWindow::showCompare);
  // A closed panel comes back from here (not only from the menu bar's context menu).
  view->addSeparator();
  QAction* facts = facts_dock_->toggleViewAction();
  facts->setText(tr("Trace &facts panel"));
  view->addAction(facts);
  buildNavigation(menuBar()->addMenu(tr("&Navigate")));
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&Points and selectors"), this, &MainWindow::showPointHelp);
}

// The library's text (the command line's --help shows the same), in a window beside the main one.
void MainWindow::showPointHelp() {
  auto* dialog = new QDialog(this);
  dialog->setObjectName(QStringLiteral("pointHelp"));
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->setWindowTitle(tr("Points and selectors"));
  auto* text = new QPlainTextEdit(QString::fromUtf8(replay::pointSyntaxHelp().data(),
                                                    static_cast<qsizetype>(replay::pointSyntaxHelp().size())),
                                  dialog);
  text->setReadOnly(true);
  text->setLineWrapMode(QPlainTextEdit::NoWrap);
  text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  // A Close button: without a window manager's title bar (or on a tiling one) Escape is not obvious.
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
  connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::close);
  auto* lay = new QVBoxLayout(dialog);
  lay->addWidget(text);
  lay->addWidget(buttons);
  dialog->resize(760, 320);
  dialog->show();
}

void MainWindow::buildNavigation(QMenu* menu) {
  auto step = [this](std::int64_t delta) {
    return [this, delta] {
      if (auto* d = currentDocument()) d->moveCursor(delta);
    };
  };
  menu->addAction(tr("&Next event"), QKeySequence(tr("Alt+Right")), this, step(1));
  menu->addAction(tr("&Previous event"), QKeySequence(tr("Alt+Left")), this, step(-1));
  // The same page as PageUp/PageDown in the plot (kPageEvents).
  menu->addAction(tr("Forward %L1 events").arg(kPageEvents), QKeySequence(tr("Alt+PgDown")), this, step(kPageEvents));
  menu->addAction(tr("Back %L1 events").arg(kPageEvents), QKeySequence(tr("Alt+PgUp")), this, step(-kPageEvents));
  menu->addAction(tr("Jump to &peak reserved"), QKeySequence(tr("Ctrl+P")), this, [this] {
    if (auto* d = currentDocument()) d->jumpToPeak();
  });
  menu->addAction(tr("&First event"), QKeySequence(tr("Alt+Home")), this, [this] {
    if (auto* d = currentDocument()) d->setCursor(0);
  });
  menu->addAction(tr("&Last event"), QKeySequence(tr("Alt+End")), this, [this] {
    if (auto* d = currentDocument()) d->setCursor(0xfffffffeu);
  });
  menu->addAction(tr("Next &trace"), QKeySequence(tr("Ctrl+Tab")), this, [this] {
    if (tabs_->count() > 0) tabs_->setCurrentIndex((tabs_->currentIndex() + 1) % tabs_->count());
  });
}

void MainWindow::exportSnapshotDialog() {
  auto* doc = currentDocument();
  if (!doc || !doc->isModelled()) {
    QMessageBox::information(this, tr("Export what-if as snapshot"), tr("The trace's model is not ready yet."));
    return;
  }
  const QString question = exportSnapshotQuestion();
  if (!question.isEmpty()) {
    const bool yes = confirm_export_ ? confirm_export_(question)
                     : batch_
                         ? true
                         : QMessageBox::question(this, tr("Export what-if as snapshot"), question) == QMessageBox::Yes;
    if (!yes) return;
  }
  const QString title =
      question.isEmpty() ? tr("Export the what-if run as a snapshot") : tr("Export the unedited run as a snapshot");
  const QString path =
      QFileDialog::getSaveFileName(this, title, QStringLiteral("whatif.pickle"), tr("Snapshots (*.pickle)"));
  if (path.isEmpty()) return;
  QApplication::setOverrideCursor(Qt::WaitCursor);
  const Status s = exportSnapshot(path);
  QApplication::restoreOverrideCursor();
  if (!s.ok())
    QMessageBox::critical(this, tr("Export failed"), QString::fromStdString(s.message()));
  else
    status_->setText(tr("wrote %1").arg(path));
}

QString MainWindow::exportSnapshotQuestion() const {
  const auto* doc = currentDocument();
  if (!doc || !doc->isModelled()) return {};
  const int sel = doc->selectedVariant();
  if (sel >= 0 && sel < static_cast<int>(doc->variants().size())) return {};
  return tr(
      "No what-if variant is selected: the snapshot will be the recording's run as the model replays it, "
      "with no edits. Export the unedited run? (To export a variant, select it in the What-if tab.)");
}

Status MainWindow::exportSnapshot(const QString& path) const {
  auto* doc = currentDocument();
  if (!doc || !doc->isModelled()) return Status::error("the trace's model is not ready");
  if (Status st = replay::checkExportTargets(doc->path().toStdString(), {{"the export", path.toStdString()}}); !st.ok())
    return st;
  const int sel = doc->selectedVariant();
  if (sel < 0 || sel >= static_cast<int>(doc->variants().size()))
    return exportWhatIfSnapshot(*doc->model(), {}, {}, path);
  const Variant& v = doc->variants()[static_cast<std::size_t>(sel)];
  return exportWhatIfSnapshot(*doc->model(), v.edits, v.settings, path);
}

void MainWindow::openDialog() {
  const QStringList paths =
      QFileDialog::getOpenFileNames(this, tr("Open memory snapshots"), QString(),
                                    tr("Snapshots (*.pickle *.pkl *.pickle.gz *.pickle.zst);;All files (*)"));
  if (!paths.isEmpty()) openFiles(paths);
}

void MainWindow::exportDialog() {
#ifdef RESERVOIR_GUI_HAVE_SVG
  const QString filter = tr("PNG image (*.png);;SVG drawing (*.svg)");
#else
  const QString filter = tr("PNG image (*.png)");
#endif
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Export plot"), QStringLiteral("reservoir-plot.png"), filter);
  if (!path.isEmpty()) exportPlot(path);
}

bool MainWindow::exportPlot(const QString& path, QSize size) {
  auto* page = currentTraceWidget();
  QWidget* source = page ? static_cast<QWidget*>(page->timeline()) : static_cast<QWidget*>(compare_->plot());
  if (!size.isValid()) size = source->size().expandedTo(QSize(600, 300));
  auto draw = [&](QPainter& p) {
    if (page)
      page->timeline()->render(p, size);
    else
      compare_->plot()->render(p, size);
  };
  if (path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive)) {
#ifdef RESERVOIR_GUI_HAVE_SVG
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setTitle(tr("Reservoir memory timeline"));
    QPainter p(&svg);
    draw(p);
    return true;
#else
    return false;
#endif
  }
  QImage image(size, QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::white);
  QPainter p(&image);
  draw(p);
  p.end();
  return image.save(path);
}

}  // namespace reservoir::gui
