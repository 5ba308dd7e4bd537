// The widgets, headless: open real traces in the main window, drive each view, render
// screenshots and exports, navigate with the keyboard, and fail cleanly on a bad file.
#include <gtest/gtest.h>
#include "reservoir/replay/report_text.h"
#include <QClipboard>

#include <QApplication>
#include <QDialogButtonBox>
#include <QDialog>
#include <QDir>
#include <QFile>
#include <QHelpEvent>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QToolTip>
#include <QTreeView>

#include "app/export_snapshot.h"
#include "app/format.h"
#include "app/options.h"
#include "app/screenshot.h"
#include "gui_test_util.h"
#include "app/trace_document.h"
#include "models/call_tree_model.h"
#include "models/event_filter_proxy.h"
#include "models/event_table_model.h"
#include "models/facts_model.h"
#include "models/segment_model.h"
#include "models/stack_model.h"
#include "models/variant_model.h"
#include "reservoir/replay/frame_text.h"
#include "reservoir/replay/peak_explain.h"
#include "reservoir/replay/point_help.h"
#include "reservoir/replay/session.h"
#include "reservoir/replay/program.h"
#include "reservoir/traces/writer.h"
#include "reservoir/traces/reader.h"
#include "test_paths.h"
#include "widgets/callsites_view.h"
#include "widgets/compare_view.h"
#include "widgets/event_details.h"
#include "widgets/events_view.h"
#include "widgets/main_window.h"
#include "widgets/state_view.h"
#include "widgets/sweep_dialog.h"
#include "widgets/timeline_view.h"
#include "widgets/trace_widget.h"
#include "widgets/whatif_panel.h"

#include <QAction>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QPointer>
#include <QPushButton>
#include <QHeaderView>
#include <QLocale>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QTableWidget>

namespace reservoir::gui {
namespace {

using test_util::sample;

// A file of `text` in `dir` (a snapshot that is not one); empty when it cannot be written.
QString writeTextFile(const QTemporaryDir& dir, const QString& name, const char* text) {
  const QString path = dir.filePath(name);
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly) || f.write(text) < 0) return {};
  f.close();
  return path;
}

// Fraction of pixels that differ from the most common colour: a blank image scores ~0.
double inkShare(const QImage& img) {
  const QRgb bg = img.pixel(img.width() / 2, 2);
  int ink = 0, total = 0;
  for (int y = 0; y < img.height(); y += 4)
    for (int x = 0; x < img.width(); x += 4, ++total) ink += img.pixel(x, y) != bg;
  return total ? static_cast<double>(ink) / total : 0.0;
}

class WidgetsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    window_ = test_util::openTinyPair();
    ASSERT_TRUE(window_);
  }
  std::unique_ptr<MainWindow> window_;
};

TEST_F(WidgetsTest, OpensSeveralRanksAndCompares) {
  ASSERT_EQ(window_->documents().size(), 2u);
  for (auto* d : window_->documents()) EXPECT_TRUE(d->isModelled());
  window_->showCompare();
  QApplication::processEvents();
  const QImage shot = window_->grab().toImage();
  EXPECT_GT(inkShare(shot), 0.05);
  EXPECT_GT(window_->facts()->rowCount(), 0);
  // In Compare the facts panel shows both traces side by side, not the first one's alone.
  ASSERT_EQ(window_->facts()->columnCount(), 3);
  EXPECT_EQ(window_->facts()->headerData(2, Qt::Horizontal, Qt::DisplayRole).toString(),
            window_->documents()[1]->title());
  EXPECT_TRUE(window_->factsDock()->windowTitle().contains(QStringLiteral("side by side")));
  window_->showTrace(1);
  EXPECT_EQ(window_->facts()->columnCount(), 2);
}

TEST_F(WidgetsTest, TimelineZoomPanAndCursor) {
  auto* page = window_->traceWidget(0);
  TimelineView* tl = page->timeline();
  TraceDocument* doc = page->document();
  QApplication::processEvents();
  const Axis full = tl->xAxis();
  tl->zoomBy(0.25);
  EXPECT_LT(tl->xAxis().d1 - tl->xAxis().d0, full.d1 - full.d0);
  tl->resetZoom();
  EXPECT_DOUBLE_EQ(tl->xAxis().d1, full.d1);
  // A click in the plot moves the cursor there.
  tl->repaint();
  QTest::mouseClick(tl, Qt::LeftButton, {}, QPoint(tl->width() / 2, tl->height() / 2));
  EXPECT_NE(doc->cursor(), 0u);
  // Keyboard: peak, next, previous.
  doc->jumpToPeak();
  EXPECT_EQ(doc->cursor(), doc->peakEvent());
  doc->moveCursor(1);
  EXPECT_EQ(doc->cursor(), doc->peakEvent() + 1);
  doc->moveCursor(-2);
  EXPECT_EQ(doc->cursor(), doc->peakEvent() - 1);
  ASSERT_NE(tl->frame(), nullptr);
  EXPECT_FALSE(tl->frame()->bands.spans.empty());
  tl->setTimeAxis(true);
  tl->repaint();
  EXPECT_TRUE(tl->timeAxis());
}

// Hovering the peak marker says where the peak came from, with its stack (replay::peakOrigin);
// switching to the time axis takes down a tooltip that described the event axis.
TEST_F(WidgetsTest, ThePeakMarkersTooltipSaysWhereThePeakCameFrom) {
  TimelineView* tl = window_->traceWidget(0)->timeline();
  tl->repaint();
  QApplication::processEvents();
  const QRect pr = tl->plotArea();
  QString peak_tip;
  for (int x = pr.left(); x < pr.right() && peak_tip.isEmpty(); ++x) {
    QHelpEvent help(QEvent::ToolTip, QPoint(x, pr.center().y()), tl->mapToGlobal(QPoint(x, pr.center().y())));
    QApplication::sendEvent(tl, &help);
    if (QToolTip::isVisible() && QToolTip::text().contains(QStringLiteral("peak reserved:"))) peak_tip = QToolTip::text();
  }
  ASSERT_FALSE(peak_tip.isEmpty()) << "no column's tooltip named the peak";
  const auto model = window_->traceWidget(0)->document()->model();
  const replay::PeakOrigin o = replay::peakOrigin(*model->model, replay::PeakQuantity::kReserved);
  EXPECT_TRUE(peak_tip.contains(QStringLiteral("at event %1").arg(o.set.event))) << peak_tip.toStdString();
  EXPECT_TRUE(peak_tip.contains(QStringLiteral("frame:"))) << "no stack: " << peak_tip.toStdString();
  ASSERT_TRUE(QToolTip::isVisible());
  tl->setTimeAxis(true);
  // Hidden after Qt's short fade, well before a tooltip's own expiry (10 s).
  EXPECT_TRUE(QTest::qWaitFor([] { return !QToolTip::isVisible(); }, 2000));
}

// The climb that made the peak is drawn where it happened (a bracket over its events, from the
// reserved bytes before it to what it still holds at the peak), and hovering it says so. On
// resume-main.rank0 with expandable segments: the FSDP spike's 2 GiB mappings, events 2850-2899.
TEST(WidgetsClimb, TheRiseThatMadeThePeakIsMarkedWhereItHappened) {
  MainWindow w;
  w.setBatchMode(true);
  w.resize(1400, 900);
  w.openFiles({test_util::sample("resume-expandable/resume-main.rank0.pickle")});
  w.show();
  ASSERT_TRUE(waitUntilIdle(w, 120000));
  TimelineView* tl = w.traceWidget(0)->timeline();
  tl->repaint();
  const TimelineLayout& l = tl->lastLayout();
  ASSERT_FALSE(l.climb.isEmpty()) << "no climb drawn";
  const auto model = w.traceWidget(0)->document()->model();
  const replay::PeakClimb& c = model->reserved_origin.climb;
  ASSERT_LT(c.first.event, c.last.event);
  const QRect plot = tl->plotArea();
  // Its left and right edges are the columns of its first and last events (2 px of margin).
  EXPECT_NEAR(l.climb.left(), tl->xOfEvent(c.first.event), 4.0);
  EXPECT_NEAR(l.climb.right(), tl->xOfEvent(c.last.event), 4.0);
  EXPECT_GT(l.climb.height(), plot.height() / 5) << "7.46 GiB of a 25 GiB plot";
  EXPECT_TRUE(plot.contains(l.climb));
  const QPoint at(l.climb.center().x(), l.climb.center().y());
  QHelpEvent help(QEvent::ToolTip, at, tl->mapToGlobal(at));
  QApplication::sendEvent(tl, &help);
  ASSERT_TRUE(QToolTip::isVisible());
  EXPECT_TRUE(QToolTip::text().contains(QStringLiteral("the rise that made it:")));
  EXPECT_TRUE(QToolTip::text().contains(QStringLiteral("over events %1-%2").arg(c.first.event).arg(c.last.event)))
      << QToolTip::text().toStdString();
  // Under the bracket, in the same column (the blocks below the climb), the tooltip is the blocks'.
  const QPoint below(at.x(), plot.bottom() - 2);
  QHelpEvent under(QEvent::ToolTip, below, tl->mapToGlobal(below));
  QApplication::sendEvent(tl, &under);
  EXPECT_FALSE(QToolTip::text().contains(QStringLiteral("the rise that made it:"))) << QToolTip::text().toStdString();
  QToolTip::hideText();
}

// A closed facts panel comes back from the View menu.
TEST_F(WidgetsTest, TheViewMenuRestoresTheClosedFactsPanel) {
  QDockWidget* dock = window_->factsDock();
  ASSERT_TRUE(dock->isVisible());
  dock->close();
  QApplication::processEvents();
  ASSERT_FALSE(dock->isVisible());
  QAction* restore = nullptr;
  for (QAction* menu : window_->menuBar()->actions())
    if (menu->menu() && menu->text() == QStringLiteral("&View"))
      for (QAction* a : menu->menu()->actions())
        if (a->text() == QStringLiteral("Trace &facts panel")) restore = a;
  ASSERT_NE(restore, nullptr) << "no View menu entry for the facts panel";
  EXPECT_FALSE(restore->isChecked());
  restore->trigger();
  QApplication::processEvents();
  EXPECT_TRUE(dock->isVisible());
  EXPECT_TRUE(restore->isChecked());
}

// Help > Points and selectors shows the library's syntax text, which is also the point field's
// tooltip; the field's placeholder fits it.
TEST_F(WidgetsTest, TheHelpMenuAndThePointFieldShowTheLibrarysSyntax) {
  const QString syntax = QString::fromUtf8(replay::pointSyntaxHelp().data(),
                                           static_cast<qsizetype>(replay::pointSyntaxHelp().size()));
  ASSERT_TRUE(syntax.contains(QStringLiteral("annotation:NAME:start")));
  QAction* points = nullptr;
  for (QAction* menu : window_->menuBar()->actions())
    if (menu->menu() && menu->text() == QStringLiteral("&Help"))
      for (QAction* a : menu->menu()->actions())
        if (a->text() == QStringLiteral("&Points and selectors")) points = a;
  ASSERT_NE(points, nullptr) << "no Help menu entry for the point syntax";
  points->trigger();
  QApplication::processEvents();
  auto* dialog = window_->findChild<QDialog*>(QStringLiteral("pointHelp"));
  ASSERT_NE(dialog, nullptr);
  auto* text = dialog->findChild<QPlainTextEdit*>();
  ASSERT_NE(text, nullptr);
  EXPECT_EQ(text->toPlainText(), syntax);
  auto* buttons = dialog->findChild<QDialogButtonBox*>();
  ASSERT_NE(buttons, nullptr) << "no Close button";
  QPushButton* close = buttons->button(QDialogButtonBox::Close);
  ASSERT_NE(close, nullptr);
  ASSERT_TRUE(dialog->isVisible());
  const QPointer<QDialog> guard(dialog);
  close->click();
  QApplication::processEvents();
  EXPECT_TRUE(guard.isNull() || !guard->isVisible());
  window_->resize(1280, 720);
  auto* page = window_->traceWidget(0);
  page->showTab(TraceWidget::Tab::kWhatIf);
  QApplication::processEvents();
  QLineEdit* point = page->whatIf()->pointField();
  EXPECT_EQ(point->toolTip(), syntax);
  const QFontMetrics fm(point->font());
  EXPECT_LE(fm.horizontalAdvance(point->placeholderText()), point->width() - 8)
      << "the placeholder is cut off at " << point->width() << " px";
  // So do the Device group's (their whole explanation is the tooltip).
  for (QLineEdit* field : {page->whatIf()->overheadField(), page->whatIf()->settingsField()}) {
    EXPECT_LE(fm.horizontalAdvance(field->placeholderText()), field->width() - 8)
        << field->placeholderText().toStdString() << " cut off at " << field->width() << " px";
    EXPECT_FALSE(field->toolTip().isEmpty());
  }
}

// At 1280x720 (a window of about 1280x670 inside a desktop's panels) the What-if tab shows the
// edit form and the whole Device group without scrolling, and the variants table keeps rows.
TEST_F(WidgetsTest, OnALaptopTheDeviceGroupIsInViewWithoutScrolling) {
  window_->resize(1280, 670);
  auto* page = window_->traceWidget(0);
  page->showTab(TraceWidget::Tab::kWhatIf);
  for (int i = 0; i < 3; ++i) QApplication::processEvents();
  auto* inputs = page->whatIf()->findChild<QScrollArea*>(QStringLiteral("whatIfInputs"));
  ASSERT_NE(inputs, nullptr);
  EXPECT_EQ(inputs->verticalScrollBar()->maximum(), 0)
      << "the inputs scroll: " << inputs->viewport()->height() << " px for " << inputs->widget()->sizeHint().height();
  QLineEdit* settings = page->whatIf()->settingsField();
  const QPoint bottom = settings->mapTo(inputs->viewport(), QPoint(0, settings->height()));
  EXPECT_LE(bottom.y(), inputs->viewport()->height()) << "the Settings field is below the fold";
  auto* variants = page->whatIf()->findChild<QTableView*>();
  ASSERT_NE(variants, nullptr);
  EXPECT_GE(variants->viewport()->height(), 3 * variants->fontMetrics().height()) << "the variants table shrank";
}

// The figures of a variant with settings fit the report pane at 1280x720: the settings text is
// elided (the tooltip has it) instead of pushing the "change" column behind a scroll bar.
TEST_F(WidgetsTest, OnALaptopTheFiguresTableFitsItsPane) {
  window_->resize(1280, 670);
  auto* page = window_->traceWidget(0);
  page->showTab(TraceWidget::Tab::kWhatIf);
  page->whatIf()->runVariant({QStringLiteral("cleanup after:state_dict_loader.py:load")},
                             QStringLiteral("expandable_segments:True,max_split_size_mb:128,garbage_collection_threshold:0.8"));
  ASSERT_TRUE(waitUntilIdle(*window_, 60000));
  for (int i = 0; i < 3; ++i) QApplication::processEvents();
  QTableView* figures = page->whatIf()->figuresView();
  ASSERT_GT(figures->model()->rowCount(), 3);
  EXPECT_EQ(figures->horizontalScrollBar()->maximum(), 0) << "the columns are wider than the pane";
  const int last = figures->model()->columnCount() - 1;
  EXPECT_LE(figures->columnViewportPosition(last) + figures->columnWidth(last), figures->viewport()->width());
  EXPECT_GE(figures->columnWidth(last), figures->horizontalHeader()->sectionSizeHint(last))
      << "the change column is cut";
  EXPECT_GE(figures->columnWidth(0), 100);
}

// On a wide screen the figures table shows the settings whole: the table elides a column only
// where the pane is too narrow (the model once shortened every setting over 20 characters to
// "expandab…nts:True", even at 2560 px), and then the settings before the figure's name.
TEST_F(WidgetsTest, OnAWideScreenTheSettingsAreShownWhole) {
  window_->resize(2560, 1400);
  auto* page = window_->traceWidget(0);
  page->showTab(TraceWidget::Tab::kWhatIf);
  const QString settings = QStringLiteral("expandable_segments:True");
  page->whatIf()->runVariant({QStringLiteral("cleanup after:state_dict_loader.py:load")}, settings);
  ASSERT_TRUE(waitUntilIdle(*window_, 60000));
  for (int i = 0; i < 3; ++i) QApplication::processEvents();
  QTableView* figures = page->whatIf()->figuresView();
  const QAbstractItemModel* m = figures->model();
  int row = -1;
  for (int r = 0; r < m->rowCount(); ++r)
    if (m->index(r, 0).data().toString() == QStringLiteral("settings")) row = r;
  ASSERT_GE(row, 0);
  const QString shown = m->index(row, 2).data().toString();
  EXPECT_EQ(shown, settings) << shown.toStdString();
  EXPECT_GE(figures->columnWidth(2), figures->fontMetrics().horizontalAdvance(shown))
      << "elided on a wide screen: " << figures->columnWidth(2) << " px of a " << figures->viewport()->width() << " px table";
  EXPECT_EQ(figures->horizontalScrollBar()->maximum(), 0);
  // The figure's name is what a row is: it keeps its width (up to two fifths of the table).
  int names = 0;
  for (int r = 0; r < m->rowCount(); ++r)
    names = std::max(names, figures->fontMetrics().horizontalAdvance(m->index(r, 0).data().toString()));
  EXPECT_GE(figures->columnWidth(0), std::min(names, figures->viewport()->width() * 2 / 5));
}

// The command line's --view and --cursor shape a window the user works in too, not only a
// screenshot (they were applied in batch mode alone).
TEST_F(WidgetsTest, TheCommandLinesViewAppliesToAnInteractiveWindow) {
  AppOptions o;
  o.view = QStringLiteral("whatif");
  o.cursor = QStringLiteral("peak");
  o.arranges = true;
  auto* page = window_->traceWidget(0);
  const auto splitter_before = page->findChild<QSplitter*>()->sizes();
  arrangeWhenReady(*window_, o);
  QTest::qWait(200);
  EXPECT_EQ(page->tabs()->currentWidget(), page->whatIf());
  EXPECT_EQ(page->document()->cursor(), page->document()->peakEvent());
  EXPECT_NE(page->document()->peakEvent(), 0u);
  EXPECT_EQ(page->findChild<QSplitter*>()->sizes(), splitter_before) << "a window keeps the user's layout";
  EXPECT_FALSE(window_->factsDock()->isHidden()) << "a window keeps its facts panel (a picture of the what-if drops it)";
}

TEST_F(WidgetsTest, StateFollowsTheCursorAndShowsBlocks) {
  auto* page = window_->traceWidget(0);
  page->showTab(TraceWidget::Tab::kState);
  page->document()->jumpToPeak();
  page->state()->rebuild();
  ASSERT_NE(page->state()->state(), nullptr);
  EXPECT_EQ(page->state()->state()->reserved, page->document()->recorded()->trace->series.peak_reserved);
  EXPECT_GT(page->state()->model()->rowCount(), 0);
  page->state()->selectBlock(0);
}

TEST_F(WidgetsTest, EventsSearchFiltersAndFollowsTheCursor) {
  auto* page = window_->traceWidget(0);
  page->showTab(TraceWidget::Tab::kEvents);
  page->events()->setQuery(QStringLiteral("action:segment_alloc"));
  EXPECT_TRUE(page->events()->proxy()->filtering());
  EXPECT_GT(page->events()->proxy()->rowCount(), 0);
  page->events()->table()->selectRow(0);
  const auto first = page->events()->proxy()->matches()[0];
  EXPECT_EQ(page->document()->cursor(), first);
  page->events()->setQuery(QString());
  EXPECT_FALSE(page->events()->proxy()->filtering());
}

TEST_F(WidgetsTest, CallSitesAtThePeak) {
  auto* page = window_->traceWidget(0);
  page->showTab(TraceWidget::Tab::kCallSites);
  page->callSites()->setAtPeak(true);
  ASSERT_NE(page->callSites()->model()->tree(), nullptr);
  EXPECT_GT(page->callSites()->model()->tree()->total(), 0);
  page->callSites()->setBottomUp(true);
  EXPECT_GT(page->callSites()->model()->rowCount(), 0);
}

TEST_F(WidgetsTest, WhatIfVariantDrawsOverTheTimelineAndMatchesTheCli) {
  auto* page = window_->traceWidget(0);
  page->showTab(TraceWidget::Tab::kWhatIf);
  page->whatIf()->runVariant({QStringLiteral("cleanup after:state_dict_loader.py:load"),
                              QStringLiteral("probe after:state_dict_loader.py:load")},
                             QString());
  ASSERT_TRUE(waitUntilIdle(*window_, 120000));
  EXPECT_EQ(page->whatIf()->model()->rowCount(), 1);
  EXPECT_TRUE(page->whatIf()->reportText().contains(QStringLiteral("reserved at after:state_dict_loader.py:load")));
  page->timeline()->repaint();
  ASSERT_NE(page->timeline()->frame(), nullptr);
  EXPECT_FALSE(page->timeline()->frame()->variant.empty());
}

TEST_F(WidgetsTest, ExportsPngAndSvg) {
  QTemporaryDir dir;
  const QString png = dir.filePath(QStringLiteral("plot.png"));
  ASSERT_TRUE(window_->exportPlot(png, QSize(800, 400)));
  QImage img(png);
  EXPECT_EQ(img.size(), QSize(800, 400));
  EXPECT_GT(inkShare(img), 0.05);
#ifdef RESERVOIR_GUI_HAVE_SVG
  const QString svg = dir.filePath(QStringLiteral("plot.svg"));
  ASSERT_TRUE(window_->exportPlot(svg, QSize(800, 400)));
  QFile f(svg);
  ASSERT_TRUE(f.open(QIODevice::ReadOnly));
  EXPECT_TRUE(f.readAll().contains("<svg"));
#endif
}

TEST_F(WidgetsTest, ExportsTheWhatIfAsASnapshotThatReadsBack) {
  auto* page = window_->traceWidget(0);
  page->whatIf()->runVariant({QStringLiteral("cleanup after:state_dict_loader.py:load")}, QString());
  ASSERT_TRUE(waitUntilIdle(*window_, 120000));
  window_->showTrace(0);
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("whatif.pickle"));
  const Status s = window_->exportSnapshot(path);
  ASSERT_TRUE(s.ok()) << s.message();
  auto snap = traces::readSnapshotFile(path.toStdString());
  ASSERT_TRUE(snap) << snap.message();
  ASSERT_FALSE(snap->devices.empty());
  // The cleanup shows up as segment frees that the recording does not have.
  std::size_t frees = 0, recorded_frees = 0;
  for (const auto& e : snap->devices[page->document()->recorded()->trace->device_index].events)
    frees += e.action == traces::Action::kSegmentFree;
  for (const auto& e : page->document()->recorded()->trace->deviceTrace().events)
    recorded_frees += e.action == traces::Action::kSegmentFree;
  EXPECT_GT(frees, recorded_frees);
}

// The sweep dialog opens at a laptop's 1200x560, and at three quarters of a larger window (at
// 2560x1400 its candidates had a fixed 1200 px dialog).
TEST(SweepDialogSize, ALargerWindowGivesALargerDialog) {
  EXPECT_EQ(sweepDialogSize(QSize(1280, 720)), QSize(1200, 560));
  EXPECT_EQ(sweepDialogSize(QSize(800, 600)), QSize(1200, 560));
  EXPECT_EQ(sweepDialogSize(QSize(2560, 1400)), QSize(1920, 1050));
  EXPECT_EQ(sweepDialogSize(QSize()), QSize(1200, 560));
  MainWindow w;
  w.setBatchMode(true);
  w.resize(2560, 1400);
  SweepDialog dialog(nullptr, &w);
  EXPECT_EQ(dialog.size(), QSize(1920, 1050));
}

TEST_F(WidgetsTest, SweepFromThePanelRanksCandidates) {
  SweepDialog dialog(window_->documents()[0]);
  EXPECT_EQ(dialog.closeButton()->text(), QStringLiteral("Close"));
  dialog.start();
  // While it runs the button cancels; once it has ended it closes, and Start runs it again.
  EXPECT_EQ(dialog.closeButton()->text(), QStringLiteral("Cancel"));
  EXPECT_FALSE(dialog.startButton()->isEnabled());
  QElapsedTimer t;
  t.start();
  while (dialog.running() && t.elapsed() < 120000) QApplication::processEvents(QEventLoop::AllEvents, 20);
  ASSERT_NE(dialog.report(), nullptr);
  EXPECT_GT(dialog.report()->evaluated, 0u);
  EXPECT_EQ(dialog.closeButton()->text(), QStringLiteral("Close"));
  EXPECT_EQ(dialog.startButton()->text(), QStringLiteral("Run again"));
  EXPECT_TRUE(dialog.startButton()->isEnabled());
  // Each candidate's text is whole in its tooltip (the column may elide it).
  ASSERT_GT(dialog.table()->rowCount(), 0);
  EXPECT_EQ(dialog.table()->item(0, 0)->toolTip(), dialog.table()->item(0, 0)->text());
  // Each row: its edit as the command line takes it, whether it is on the Pareto front, the price
  // per step beside the whole run's, and calls per step in words a person reads.
  const auto& rep = *dialog.report();
  QTableWidget* table = dialog.table();
  int column_edit = -1, column_pareto = -1, column_step_price = -1, column_per_step = -1;
  for (int c = 0; c < table->columnCount(); ++c) {
    const QString h = table->horizontalHeaderItem(c)->text();
    if (h == QStringLiteral("edit")) column_edit = c;
    if (h == QStringLiteral("Pareto")) column_pareto = c;
    if (h == QStringLiteral("price/step")) column_step_price = c;
    if (h == QStringLiteral("calls/step")) column_per_step = c;
  }
  ASSERT_GE(column_edit, 0);
  ASSERT_GE(column_pareto, 0);
  ASSERT_GE(column_step_price, 0);
  ASSERT_GE(column_per_step, 0);
  ASSERT_EQ(table->rowCount(), static_cast<int>(rep.candidates.size()));
  int on_front = 0;
  for (int r = 0; r < table->rowCount(); ++r) {
    const auto& c = rep.candidates[static_cast<std::size_t>(r)];
    EXPECT_EQ(table->item(r, column_edit)->text().toStdString(), replay::shellWords(c.edits));
    EXPECT_EQ(table->item(r, column_pareto)->text() == QStringLiteral("yes"), c.pareto) << r;
    on_front += c.pareto ? 1 : 0;
    if (c.calls_per_step && *c.calls_per_step > 0 && *c.calls_per_step < 1) {
      EXPECT_TRUE(table->item(r, column_per_step)->text().contains(QStringLiteral(" every "))) << r;
    }
    if (c.calls_per_step && c.empty_cache_calls > 0) {
      EXPECT_EQ(table->item(r, column_step_price)->text().toStdString(),
                replay::priceText(c.price_seconds / (static_cast<double>(c.empty_cache_calls) / *c.calls_per_step)));
    }
  }
  EXPECT_EQ(on_front, static_cast<int>(rep.pareto.size()));
  EXPECT_GT(on_front, 0);
  EXPECT_FALSE(dialog.copyButton()->isEnabled());
  table->selectRow(0);
  EXPECT_TRUE(dialog.copyButton()->isEnabled());
  dialog.copyButton()->click();
  EXPECT_EQ(QApplication::clipboard()->text(), table->item(0, column_edit)->text());
  EXPECT_TRUE(QApplication::clipboard()->text().startsWith(QStringLiteral("--")));
  EXPECT_TRUE(dialog.statusText().contains(QStringLiteral("training step"))) << dialog.statusText().toStdString();
  EXPECT_TRUE(dialog.statusText().contains(QStringLiteral("(%1 replays)").arg(rep.replays)))
      << dialog.statusText().toStdString();
  // The candidate column keeps room for its text: the edit column does not take the width.
  dialog.resize(1200, 560);
  dialog.show();
  QApplication::processEvents();
  EXPECT_GE(table->columnWidth(0), 150) << "the candidate column was squeezed";
  // Its share is of the table as laid out, not of the viewport before the layout sized it, and
  // it leaves the figures and 120 px of the edit in view: the table does not scroll sideways.
  QApplication::processEvents();
  int figures = 0;
  for (int c = 1; c + 1 < table->columnCount(); ++c) figures += table->columnWidth(c);
  EXPECT_GE(table->columnWidth(0),
            std::min(table->viewport()->width() * 35 / 100 - 1, table->viewport()->width() - figures - 120))
      << table->columnWidth(0) << " of " << table->viewport()->width();
  EXPECT_EQ(table->horizontalScrollBar()->maximum(), 0)
      << "the table scrolls sideways: figures " << figures << " of " << table->viewport()->width();
  QStringList edits;
  QString settings;
  candidateToEdits({"--cleanup", "after:x.py:f", "--set", "expandable_segments:True"}, &edits, &settings);
  EXPECT_EQ(edits, QStringList{QStringLiteral("cleanup after:x.py:f")});
  EXPECT_EQ(settings, QStringLiteral("expandable_segments:True"));
}

void zoomOnThePeak(TimelineView* tl, TraceDocument* doc) {
  const auto peak = doc->recorded()->trace->series.peak_reserved_event;
  tl->zoomToEvents(peak > 50 ? peak - 50 : 0, peak + 50);
}

// At 800x600, before and after a what-if (the legend grows by a line), the legend sits
// outside the plot, away from the peak label and under the x axis's title.
TEST_F(WidgetsTest, TheLegendNeverCoversThePlotOrThePeakLabel) {
  window_->resize(800, 600);
  auto* page = window_->traceWidget(0);
  page->showTab(TraceWidget::Tab::kWhatIf);
  QApplication::processEvents();
  TimelineView* tl = page->timeline();
  auto check = [&](const char* when, bool peak_in_view) {
    tl->repaint();
    const TimelineLayout& l = tl->lastLayout();
    SCOPED_TRACE(when);
    ASSERT_FALSE(l.legend.isEmpty());
    EXPECT_FALSE(l.legend.intersects(tl->plotArea()));
    EXPECT_TRUE(tl->rect().contains(l.legend)) << "the legend is cut off";
    ASSERT_FALSE(l.x_title.isEmpty());
    EXPECT_FALSE(l.legend.intersects(l.x_title)) << "the legend covers the x axis's title";
    EXPECT_GT(l.x_title.top(), tl->plotArea().bottom());
    if (peak_in_view) {
      ASSERT_FALSE(l.peak_label.isEmpty());
    }
    EXPECT_FALSE(l.legend.intersects(l.peak_label));
    EXPECT_TRUE(l.peak_label.isEmpty() || tl->rect().contains(l.peak_label)) << "the peak label is cut off";
    EXPECT_GT(tl->plotArea().height(), tl->height() / 3) << "the legend leaves too little room for the plot";
  };
  check("recording", true);
  page->whatIf()->runVariant({QStringLiteral("cleanup after:state_dict_loader.py:load")}, QString());
  ASSERT_TRUE(waitUntilIdle(*window_, 120000));
  check("with a what-if", true);
  // The cleanup is marked on the plot, inside it.
  ASSERT_EQ(tl->lastLayout().edit_marks.size(), 1u);
  EXPECT_TRUE(tl->plotArea().intersects(tl->lastLayout().edit_marks[0].rect));
  // Zoomed on the peak: the legend still stays out of the plot.
  zoomOnThePeak(tl, page->document());
  check("zoomed on the peak", true);
}

// A click on an events row highlights that row and puts the cursor on its event, filtered too.
TEST_F(WidgetsTest, TheHighlightedEventRowIsTheCursors) {
  auto* page = window_->traceWidget(0);
  page->showTab(TraceWidget::Tab::kEvents);
  QApplication::processEvents();
  QTableView* table = page->events()->table();
  TraceDocument* doc = page->document();
  auto clickRowBelowCenter = [&](int offset) {
    const QModelIndex center = table->indexAt(table->viewport()->rect().center());
    ASSERT_TRUE(center.isValid());
    const QModelIndex target = table->model()->index(center.row() + offset, 1);
    const auto expected = target.data(EventTableModel::EventRole).toUInt();
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(target).center());
    QApplication::processEvents();
    EXPECT_EQ(doc->cursor(), expected);
    const auto rows = table->selectionModel()->selectedRows();
    ASSERT_EQ(rows.size(), 1);
    EXPECT_EQ(rows[0].data(EventTableModel::EventRole).toUInt(), doc->cursor());
    EXPECT_EQ(table->currentIndex().row(), rows[0].row());
  };
  doc->setCursor(500);
  QApplication::processEvents();
  clickRowBelowCenter(3);
  clickRowBelowCenter(-2);
  page->events()->setQuery(QStringLiteral("action:free_completed"));
  QApplication::processEvents();
  clickRowBelowCenter(4);
}

// A trace longer than the table's window: the table follows the cursor anywhere in it, and
// scrolled to the window's edge it goes on (the window slides) without moving the cursor.
TEST_F(WidgetsTest, TheEventTableWindowFollowsTheCursorAndTheScrollBar) {
  auto* page = window_->traceWidget(0);
  page->showTab(TraceWidget::Tab::kEvents);
  QApplication::processEvents();
  QTableView* table = page->events()->table();
  TraceDocument* doc = page->document();
  EventFilterProxy* proxy = page->events()->proxy();
  proxy->setWindowRows(200);
  ASSERT_GT(proxy->shownRows(), 1000u);
  for (const std::uint32_t e : {900u, 40u, static_cast<std::uint32_t>(proxy->shownRows() - 1), 500u}) {
    doc->setCursor(e);
    QApplication::processEvents();
    EXPECT_EQ(table->currentIndex().data(EventTableModel::EventRole).toUInt(), e);
    EXPECT_TRUE(table->viewport()->rect().intersects(table->visualRect(table->currentIndex()))) << e;
    EXPECT_EQ(proxy->rowCount(), 200);
  }
  const std::size_t begin = proxy->windowBegin();
  const int top_event = table->indexAt(QPoint(5, 5)).data(EventTableModel::EventRole).toInt();
  QScrollBar* bar = table->verticalScrollBar();
  bar->setValue(bar->maximum());
  QApplication::processEvents();
  EXPECT_EQ(proxy->windowBegin(), begin + 100) << "slid by half the window";
  EXPECT_EQ(doc->cursor(), 500u) << "scrolling moves no cursor";
  EXPECT_GT(table->indexAt(QPoint(5, 5)).data(EventTableModel::EventRole).toInt(), top_event);
  bar->setValue(bar->minimum());
  QApplication::processEvents();
  EXPECT_EQ(proxy->windowBegin(), begin) << "and back";
  EXPECT_EQ(doc->cursor(), 500u);
  proxy->setWindowRows(EventFilterProxy::kWindowRows);
}

// A click on the row cut by the table's bottom edge selects that row: the cursor's move does
// not scroll the table under the pressed mouse (Qt then selects the row that slid under it,
// leaving the current row and the highlighted one apart: what a shorter table did to the
// rows a few below its centre).
TEST_F(WidgetsTest, AClickOnAPartlyVisibleEventRowSelectsThatRow) {
  auto* page = window_->traceWidget(0);
  page->showTab(TraceWidget::Tab::kEvents);
  TraceDocument* doc = page->document();
  QTableView* table = page->events()->table();
  doc->setCursor(500);
  QApplication::processEvents();
  // Grow the window a pixel at a time until the bottom row shows only a part of itself.
  QModelIndex cut;
  for (int extra = 0; extra < 40 && !cut.isValid(); ++extra) {
    window_->resize(1400, 900 + extra);
    QApplication::processEvents();
    const QModelIndex bottom = table->indexAt(QPoint(10, table->viewport()->height() - 4));
    const QRect r = table->visualRect(bottom);
    const int h = table->viewport()->height();
    if (bottom.isValid() && r.bottom() >= h && r.top() < h - 6) cut = bottom;
  }
  ASSERT_TRUE(cut.isValid()) << "no partly visible bottom row";
  const auto expected = cut.data(EventTableModel::EventRole).toUInt();
  const QPoint at(table->visualRect(cut).center().x(), table->viewport()->height() - 4);
  QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, at);
  QApplication::processEvents();
  EXPECT_EQ(doc->cursor(), expected);
  const auto rows = table->selectionModel()->selectedRows();
  ASSERT_EQ(rows.size(), 1);
  EXPECT_EQ(rows[0].data(EventTableModel::EventRole).toUInt(), expected);
  EXPECT_EQ(table->currentIndex().row(), rows[0].row());
}

// Beside the Events table, the highlighted event's details: action, size in PyTorch's units and
// in bytes, stream, address, time (all selectable) and its whole stack (short file:line, the
// full path on hover); a click on another row shows that one.
TEST_F(WidgetsTest, TheEventsDetailsPaneShowsTheHighlightedEvent) {
  using Field = EventDetails::Field;
  auto* page = window_->traceWidget(0);
  page->showTab(TraceWidget::Tab::kEvents);
  QApplication::processEvents();
  TraceDocument* doc = page->document();
  const auto rec = doc->recorded();
  const auto& snap = rec->trace->snapshot();
  const auto& events = rec->trace->deviceTrace().events;
  // Opened, before anything is clicked: the cursor's event is described (not "none highlighted").
  EXPECT_EQ(page->events()->details()->fieldText(Field::kEvent), QString::number(doc->cursor()));
  std::uint32_t e = 1;
  while (e < events.size() && (events[e].action != traces::Action::kAlloc || snap.stack(events[e].stack).size() < 3))
    ++e;
  ASSERT_LT(e, events.size()) << "no allocation with a stack of 3 frames";
  doc->setCursor(e);
  QApplication::processEvents();
  EventDetails* d = page->events()->details();
  QTableView* table = page->events()->table();
  ASSERT_TRUE(d->isVisible());
  EXPECT_GE(d->mapTo(page, QPoint(0, 0)).x(), table->mapTo(page, QPoint(table->width(), 0)).x()) << "not beside";
  const auto& ev = events[e];
  const auto bytes = static_cast<std::int64_t>(ev.size);
  EXPECT_EQ(d->fieldText(Field::kEvent), QString::number(e));
  EXPECT_EQ(d->fieldText(Field::kAction), QStringLiteral("alloc"));
  EXPECT_TRUE(d->fieldText(Field::kSize).startsWith(sizeText(bytes))) << d->fieldText(Field::kSize).toStdString();
  EXPECT_TRUE(d->fieldText(Field::kSize).endsWith(QStringLiteral("(%1 bytes)").arg(bytes)));
  EXPECT_TRUE(d->fieldText(Field::kSize).contains(QStringLiteral("iB"))) << "not in PyTorch's units";
  EXPECT_EQ(d->fieldText(Field::kStream), QString::number(snap.stream(ev)));
  EXPECT_TRUE(d->fieldText(Field::kAddress).contains(QString::number(ev.addr, 16)));
  EXPECT_TRUE(d->fieldText(Field::kTime)
                  .startsWith(timeText(rec->trace->deviceTrace().timeOf(e) - rec->trace->facts.first_time_us)));
  EXPECT_TRUE(d->fieldLabel(Field::kAddress)->textInteractionFlags() & Qt::TextSelectableByMouse);
  const auto frames = snap.stack(ev.stack);
  ASSERT_EQ(d->stackView()->model()->rowCount(), static_cast<int>(frames.size()));
  // A cut file:line keeps its line number (elided in the middle, not at the end).
  EXPECT_EQ(d->stackView()->textElideMode(), Qt::ElideMiddle);
  for (int r = 0; r < static_cast<int>(frames.size()); ++r) {
    const traces::Frame& f = snap.frames[frames[static_cast<std::size_t>(r)].value()];
    const QModelIndex file = d->stackView()->model()->index(r, StackModel::kFile);
    EXPECT_EQ(file.data(StackModel::FrameRole).toUInt(), frames[static_cast<std::size_t>(r)].value());
    EXPECT_EQ(
        file.data().toString(),
        QStringLiteral("%1:%2").arg(QString::fromStdString(replay::shortFramePath(snap.str(f.filename)))).arg(f.line));
    const std::string_view full = snap.str(f.filename);
    EXPECT_EQ(
        file.data(Qt::ToolTipRole).toString(),
        QStringLiteral("%1:%2").arg(QString::fromUtf8(full.data(), static_cast<qsizetype>(full.size()))).arg(f.line));
  }
  const QModelIndex below = table->model()->index(table->currentIndex().row() + 2, 1);
  QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(below).center());
  QApplication::processEvents();
  EXPECT_EQ(doc->cursor(), e + 2);
  EXPECT_EQ(d->fieldText(Field::kEvent), QString::number(e + 2));
  EXPECT_EQ(d->fieldText(Field::kAction), QString::fromUtf8(traces::actionName(events[e + 2].action).data()));
}

// A filtered table highlights the match at or after the cursor; a click on that row, already
// the current one, moves the cursor to it.
TEST_F(WidgetsTest, ClickingTheHighlightedFilteredRowMovesTheCursor) {
  auto* page = window_->traceWidget(0);
  page->showTab(TraceWidget::Tab::kEvents);
  QApplication::processEvents();
  TraceDocument* doc = page->document();
  page->events()->setQuery(QStringLiteral("action:segment_alloc"));
  const auto& m = page->events()->proxy()->matches();
  std::size_t k = 1;
  while (k < m.size() && m[k] - 1 == m[k - 1]) ++k;
  ASSERT_LT(k, m.size()) << "no match with a non-matching event before it";
  const std::uint32_t before = m[k] - 1;
  doc->setCursor(before);
  QApplication::processEvents();
  QTableView* table = page->events()->table();
  ASSERT_EQ(table->currentIndex().data(EventTableModel::EventRole).toUInt(), m[k]);
  ASSERT_EQ(doc->cursor(), before);
  QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(table->currentIndex()).center());
  QApplication::processEvents();
  EXPECT_EQ(doc->cursor(), m[k]);
  EXPECT_EQ(page->events()->details()->fieldText(EventDetails::Field::kEvent), QString::number(m[k]));
}

// The edits stay after Run; the report starts with the verdict, wraps, and names no flag.
TEST_F(WidgetsTest, WhatIfPanelKeepsTheEditsAndLeadsWithTheVerdict) {
  auto* page = window_->traceWidget(0);
  page->showTab(TraceWidget::Tab::kWhatIf);
  const QString edits =
      QStringLiteral("cleanup after:state_dict_loader.py:load\nprobe after:state_dict_loader.py:load");
  page->whatIf()->setEditsText(edits);
  page->whatIf()->runPending();
  ASSERT_TRUE(waitUntilIdle(*window_, 120000));
  EXPECT_EQ(page->whatIf()->editsText(), edits);
  const QString report = page->whatIf()->reportText();
  EXPECT_TRUE(report.startsWith(QStringLiteral("empty_cache after state_dict_loader.py:load: reserved there ")))
      << report.left(200).toStdString();
  EXPECT_FALSE(report.contains(QStringLiteral(" --"))) << report.toStdString();
  EXPECT_TRUE(page->whatIf()->verdictLabel()->wordWrap());
  EXPECT_TRUE(report.startsWith(page->whatIf()->verdictLabel()->text() + QLatin1Char('\n')));
  const auto* m = page->whatIf()->model();
  const QString saving = m->index(0, 3).data().toString();
  EXPECT_EQ(saving, QStringLiteral("none")) << "the peak is unchanged on resume-tiny";
  EXPECT_EQ(m->headerData(3, Qt::Horizontal, Qt::DisplayRole).toString(), QStringLiteral("peak saving"));
}

// The objective is chosen in the dialog; the table sorts, shows sizes, prices, the full
// "calls/run" header whole, with what it counts in its tooltip; a double-click runs the row's candidate.
TEST_F(WidgetsTest, SweepDialogObjectiveSortingAndDoubleClick) {
  SweepDialog dialog(window_->documents()[0]);
  dialog.resize(1000, 520);
  dialog.show();
  dialog.setObjective(QStringLiteral("reserved:before:broadcast_weights"));
  EXPECT_EQ(dialog.objectiveText(), QStringLiteral("reserved:before:broadcast_weights"));
  dialog.start();
  QElapsedTimer t;
  t.start();
  while (dialog.running() && t.elapsed() < 120000) QApplication::processEvents(QEventLoop::AllEvents, 20);
  ASSERT_NE(dialog.report(), nullptr);
  EXPECT_EQ(dialog.rowsShownWhileRunning(), static_cast<int>(dialog.report()->evaluated))
      << "the candidates did not show as they arrived";
  EXPECT_TRUE(dialog.statusText().contains(QStringLiteral("reserved at before:broadcast_weights")));
  EXPECT_FALSE(dialog.statusText().contains(QStringLiteral("--")));
  EXPECT_FALSE(dialog.statusText().contains(QStringLiteral(" in 0.0 s"))) << "a short sweep's time read as none";
  QTableWidget* table = dialog.table();
  EXPECT_TRUE(table->isSortingEnabled());
  ASSERT_GT(table->rowCount(), 1);
  EXPECT_TRUE(table->item(0, 2)->text().contains(QStringLiteral("iB"))) << table->item(0, 2)->text().toStdString();
  const QString header = table->horizontalHeaderItem(3)->text();
  EXPECT_EQ(header, QStringLiteral("calls/run"));
  EXPECT_TRUE(table->horizontalHeaderItem(3)->toolTip().startsWith(QStringLiteral("empty_cache calls")));
  QApplication::processEvents();
  EXPECT_GE(table->columnWidth(3), table->horizontalHeader()->fontMetrics().horizontalAdvance(header));
  EXPECT_EQ(table->horizontalHeaderItem(6)->text(), QStringLiteral("price/run"));
  table->sortItems(6, Qt::AscendingOrder);  // by price
  EXPECT_EQ(table->item(0, 6)->text(), QStringLiteral("0")) << "a settings candidate costs nothing";
  QStringList got;
  QObject::connect(&dialog, &SweepDialog::runCandidate,
                   [&](const QStringList& edits, const QString& settings) { got = edits + QStringList{settings}; });
  table->sortItems(6, Qt::DescendingOrder);
  const QString row0 = table->item(0, 0)->text();
  dialog.runRow(0);
  ASSERT_FALSE(got.isEmpty());
  EXPECT_TRUE(got.front().startsWith(QStringLiteral("cleanup "))) << row0.toStdString();
}

TEST_F(WidgetsTest, ACancelledSweepDoesNotReadFull) {
  SweepDialog dialog(window_->documents()[0]);
  // The sweep of this small trace takes milliseconds: on a loaded machine this thread may not
  // run again before it ends, so a cancel that came too late is tried again (a few times).
  for (int attempt = 0; attempt < 5; ++attempt) {
    dialog.start();
    dialog.cancel();
    QElapsedTimer t;
    t.start();
    while (dialog.running() && t.elapsed() < 120000) QApplication::processEvents(QEventLoop::AllEvents, 20);
    ASSERT_NE(dialog.report(), nullptr);
    if (dialog.report()->cancelled) break;
  }
  ASSERT_TRUE(dialog.report()->cancelled) << "the cancel came too late on this machine, five times";
  QApplication::processEvents();
  EXPECT_LT(dialog.progressBar()->value(), dialog.progressBar()->maximum());
  EXPECT_TRUE(dialog.statusText().contains(QStringLiteral("cancelled")));
}

// Several what-if variants are drawn at once: the selected one and the others beside it.
TEST_F(WidgetsTest, SeveralWhatIfOverlays) {
  auto* page = window_->traceWidget(0);
  page->whatIf()->runVariant({QStringLiteral("cleanup after:state_dict_loader.py:load")}, QString());
  page->whatIf()->runVariant({QStringLiteral("cleanup before:broadcast_weights")}, QString());
  page->whatIf()->runVariant({}, QStringLiteral("expandable_segments:True"));
  ASSERT_TRUE(waitUntilIdle(*window_, 120000));
  page->timeline()->repaint();
  const TimelineFrame* f = page->timeline()->frame();
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->variant.empty());
  ASSERT_EQ(f->overlays.size(), 2u);
  for (const auto& o : f->overlays) EXPECT_EQ(o.size(), f->variant.size());
}

// PageDown in the plot and Navigate's Alt+PgDown move the cursor the same way, as the menu says.
TEST_F(WidgetsTest, PageKeysAndTheNavigateMenuAgree) {
  QAction* forward = nullptr;
  for (QAction* a : window_->findChildren<QAction*>())
    if (a->shortcut() == QKeySequence(QStringLiteral("Alt+PgDown"))) forward = a;
  ASSERT_NE(forward, nullptr);
  EXPECT_TRUE(forward->text().contains(QLocale().toString(kPageEvents))) << forward->text().toStdString();
  auto* page = window_->traceWidget(0);
  TraceDocument* doc = page->document();
  doc->setCursor(0);
  forward->trigger();
  const auto by_menu = doc->cursor();
  doc->setCursor(0);
  QTest::keyClick(page->timeline(), Qt::Key_PageDown);
  EXPECT_EQ(doc->cursor(), by_menu);
  EXPECT_GT(by_menu, 0u);
}

// Shrunk to 800x600 and grown again, the facts panel gets back a width that shows its values.
TEST_F(WidgetsTest, TheFactsPanelRecoversItsWidth) {
  window_->resize(800, 600);
  QApplication::processEvents();
  window_->resize(1600, 1000);
  QApplication::processEvents();
  EXPECT_GE(window_->factsDock()->width(), 320);
  EXPECT_LE(window_->factsDock()->width(), 1600 / 2);
}

// Below 1400 px the facts panel gives width back to the plot (a quarter of the window at most).
TEST_F(WidgetsTest, TheFactsPanelShrinksOnALaptopScreen) {
  window_->resize(1600, 1000);
  QApplication::processEvents();
  const int wide = window_->factsDock()->width();
  window_->resize(1280, 720);
  QApplication::processEvents();
  EXPECT_LE(window_->factsDock()->width(), 1280 / 4 + 8);
  EXPECT_LT(window_->factsDock()->width(), wide);
  EXPECT_GE(window_->factsDock()->width(), 200);
  // The tabs under the plot get half of a short window's height (the report and the block list).
  auto* page = window_->traceWidget(0);
  EXPECT_GE(page->tabs()->height() + 4, page->timeline()->height())
      << "tabs " << page->tabs()->height() << " px, timeline " << page->timeline()->height() << " px";
}

// With no variant selected, File > Export what-if as snapshot says that it writes the unedited
// run and asks first ("no" writes nothing); with a variant selected it has nothing to ask.
TEST_F(WidgetsTest, ExportingWithNoVariantSaysItWritesTheUneditedRun) {
  QString asked;
  window_->setExportConfirmation([&](const QString& q) {
    asked = q;
    return false;
  });
  QAction* snapshot = nullptr;
  for (QAction* menu : window_->menuBar()->actions())
    if (menu->menu() && menu->text() == QStringLiteral("&File"))
      for (QAction* a : menu->menu()->actions())
        if (a->text() == QStringLiteral("Export what-if as &snapshot...")) snapshot = a;
  ASSERT_NE(snapshot, nullptr);
  // An export that goes ahead without asking opens its file dialog: closed here, not waited on.
  QTimer closer;
  QObject::connect(&closer, &QTimer::timeout, [] {
    if (QWidget* modal = QApplication::activeModalWidget()) modal->close();
  });
  closer.start(50);
  snapshot->trigger();
  closer.stop();
  EXPECT_TRUE(asked.contains(QStringLiteral("No what-if variant is selected"))) << asked.toStdString();
  EXPECT_TRUE(asked.contains(QStringLiteral("unedited"))) << asked.toStdString();
  EXPECT_FALSE(window_->statusText().startsWith(QStringLiteral("wrote"))) << window_->statusText().toStdString();
  window_->traceWidget(0)->whatIf()->runVariant({QStringLiteral("cleanup after:state_dict_loader.py:load")}, {});
  ASSERT_TRUE(waitUntilIdle(*window_, 120000));
  ASSERT_GE(window_->documents()[0]->selectedVariant(), 0);
  EXPECT_TRUE(window_->exportSnapshotQuestion().isEmpty()) << window_->exportSnapshotQuestion().toStdString();
}

// Closing the window with what-if variants asks first; "no" keeps it open.
TEST_F(WidgetsTest, QuitAsksWhenVariantsWouldBeLost) {
  EXPECT_TRUE(window_->unsavedWork().isEmpty());
  window_->traceWidget(0)->whatIf()->runVariant({QStringLiteral("cleanup after:state_dict_loader.py:load")}, {});
  ASSERT_TRUE(waitUntilIdle(*window_, 120000));
  QString asked;
  bool answer = false;
  window_->setQuitConfirmation([&](const QString& q) {
    asked = q;
    return answer;
  });
  EXPECT_FALSE(window_->close());
  EXPECT_TRUE(asked.contains(QStringLiteral("1 what-if variant"))) << asked.toStdString();
  EXPECT_TRUE(window_->isVisible());
  answer = true;
  EXPECT_TRUE(window_->close());
}

// A file that is not a snapshot, for the pages of a failed open.
class WidgetsBadFile : public ::testing::Test {
 protected:
  void SetUp() override {
    bad = writeTextFile(dir, QStringLiteral("bad.pickle"), "this is not a pickle");
    ASSERT_FALSE(bad.isEmpty());
  }
  QTemporaryDir dir;
  QString bad;
};

TEST_F(WidgetsBadFile, ShowsTheReadersMessage) {
  MainWindow w;
  w.setBatchMode(true);
  w.openFiles({bad});
  ASSERT_TRUE(waitUntilIdle(w, 30000));
  ASSERT_EQ(w.errors().size(), 1);
  // Plain words first (the reader's headline), then the file and the byte-level detail.
  const QString expected =
      QStringLiteral(
          R"(not a PyTorch memory snapshot: the file starts with text ("this is not a pickle") (file %1, byte 0: first byte 0x74, expected)")
          .arg(bad);
  EXPECT_TRUE(w.errors()[0].startsWith(expected)) << w.errors()[0].toStdString();
}

// A failed open says so in its own tab at once, can be closed, and makes no Compare tab; the
// status bar speaks of the trace in view.
TEST_F(WidgetsBadFile, AFailedOpenShowsInItsTabAndMakesNoCompare) {
  MainWindow w;
  w.setBatchMode(true);
  w.openFiles({sample("resume-tiny/resume-main.rank0.pickle"), bad});
  ASSERT_TRUE(waitUntilIdle(w, 120000));
  EXPECT_EQ(w.tabs()->indexOf(w.compareView()), -1) << "a Compare tab for a file that did not open";
  ASSERT_EQ(w.tabs()->count(), 2);
  EXPECT_TRUE(w.tabs()->tabText(1).contains(QStringLiteral("could not open"))) << w.tabs()->tabText(1).toStdString();
  EXPECT_TRUE(w.tabs()->tabsClosable());
  w.showTrace(0);
  EXPECT_FALSE(w.statusText().contains(QStringLiteral("could not open"))) << w.statusText().toStdString();
  w.showTrace(1);
  EXPECT_TRUE(w.statusText().contains(QStringLiteral("could not open"))) << w.statusText().toStdString();
  // The facts panel says which file and why, rather than nothing.
  auto* facts = qobject_cast<QTableView*>(w.factsDock()->widget());
  ASSERT_NE(facts, nullptr);
  QString why;
  for (int r = 0; r < facts->model()->rowCount(); ++r)
    if (facts->model()->index(r, 0).data().toString() == QStringLiteral("could not open"))
      why = facts->model()->index(r, 1).data().toString();
  EXPECT_TRUE(why.startsWith(QStringLiteral("not a PyTorch memory snapshot"))) << why.toStdString();
  EXPECT_TRUE(w.statusText().contains(QStringLiteral("not a PyTorch memory snapshot: the file starts with text")))
      << w.statusText().toStdString();
  EXPECT_TRUE(w.tabs()->tabToolTip(1).startsWith(QStringLiteral("not a PyTorch memory snapshot")))
      << w.tabs()->tabToolTip(1).toStdString();
  // The dialog leads with the file and the plain words, not with "could not read".
  const TraceDocument* failed = w.documents()[1];
  EXPECT_EQ(failed->errorHeadline().toStdString().rfind("not a PyTorch memory snapshot", 0), 0u)
      << failed->errorHeadline().toStdString();
  EXPECT_TRUE(w.failureSummary(failed).startsWith(QStringLiteral("bad.pickle: not a PyTorch memory snapshot")))
      << w.failureSummary(failed).toStdString();
  EXPECT_FALSE(w.failureSummary(failed).contains(QStringLiteral("(file "))) << "the detail is under it, not in it";
  // Its state tab does not promise a model that will never come.
  const QString state_text = w.traceWidget(1)->state()->placeholder();
  EXPECT_TRUE(state_text.contains(QStringLiteral("could not be opened"))) << state_text.toStdString();
  EXPECT_FALSE(state_text.contains(QStringLiteral("when the model is ready"))) << state_text.toStdString();
  EXPECT_TRUE(w.traceWidget(0)->state()->placeholder().contains(QStringLiteral("when the model is ready")));
  // Its page shows the reader's message whole in the timeline's place: wrapped, selectable.
  w.resize(800, 600);
  w.show();
  w.showTrace(1);
  QApplication::processEvents();
  QLabel* failure = w.traceWidget(1)->failureLabel();
  EXPECT_TRUE(failure->isVisible());
  EXPECT_TRUE(w.traceWidget(1)->timeline()->isHidden());
  EXPECT_TRUE(failure->wordWrap());
  EXPECT_TRUE(failure->textInteractionFlags() & Qt::TextSelectableByMouse);
  EXPECT_TRUE(failure->text().contains(failed->error())) << failure->text().toStdString();
  EXPECT_LE(failure->width(), w.width());
  EXPECT_GE(failure->height(), failure->heightForWidth(failure->width())) << "the message is cut off";
  EXPECT_FALSE(w.traceWidget(0)->failureLabel()->isVisibleTo(w.traceWidget(0)));
  EXPECT_TRUE(w.traceWidget(1)->openAgainButton()->isVisible());
  w.closeTab(1);
  EXPECT_EQ(w.documents().size(), 1u);
  EXPECT_EQ(w.tabs()->count(), 1);
}

// A trace that reads but cannot be modelled (more streams than an op names): the state tab says
// why in the library's words, not "could not be opened ()".
TEST(WidgetsModelFailure, TheStateTabNamesWhyTheModelDidNotRun) {
  traces::Snapshot snap;
  traces::DeviceTrace d;
  for (std::size_t k = 1; k <= replay::kMaxStreamEntries; ++k) {
    traces::TraceEvent e;
    e.action = traces::Action::kAlloc;
    e.addr = 0x100000000ull + k * 512;
    e.size = 512;
    snap.setStream(e, static_cast<traces::StreamValue>(k * 16));
    d.events.push_back(e);
  }
  snap.devices.push_back(std::move(d));
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("streams.pickle"));
  ASSERT_TRUE(traces::writeSnapshotFile(snap, path.toStdString()).ok());
  MainWindow w;
  w.setBatchMode(true);
  w.openFiles({path});
  ASSERT_TRUE(waitUntilIdle(w, 60000));
  const QString state_text = w.traceWidget(0)->state()->placeholder();
  EXPECT_TRUE(state_text.contains(QStringLiteral("too many streams to model"))) << state_text.toStdString();
  EXPECT_FALSE(state_text.contains(QStringLiteral("()"))) << state_text.toStdString();
}

// Opened on a laptop's short window (shown while the file loads, as the app does), a failed page
// still shows the message: the short-window rule had given the timeline's place half the height
// and the message none.
TEST_F(WidgetsBadFile, OnALaptopTheMessageIsShownWhole) {
  MainWindow w;
  w.setBatchMode(true);
  w.resize(1264, 672);
  w.show();
  QApplication::processEvents();
  w.openFiles({bad});
  QApplication::processEvents();
  ASSERT_TRUE(waitUntilIdle(w, 120000));
  QApplication::processEvents();
  QLabel* failure = w.traceWidget(0)->failureLabel();
  ASSERT_TRUE(failure->isVisible());
  EXPECT_GE(failure->height(), failure->heightForWidth(failure->width())) << "the message is cut off";
}

// The failed page offers to read the file again: once the file is fixed, "Open again" opens it.
TEST_F(WidgetsBadFile, OpenAgainReadsTheFixedFile) {
  MainWindow w;
  w.setBatchMode(true);
  w.resize(1000, 700);
  w.show();
  w.openFiles({bad});
  ASSERT_TRUE(waitUntilIdle(w, 30000));
  QApplication::processEvents();
  ASSERT_TRUE(w.documents().front()->failed());
  QPushButton* again = w.traceWidget(0)->openAgainButton();
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(again->isVisible());
  // Fixed: the real snapshot now sits where the bad file was.
  ASSERT_TRUE(QFile::remove(bad));
  ASSERT_TRUE(QFile::copy(sample("resume-tiny/resume-main.rank0.pickle"), bad));
  again->click();
  ASSERT_TRUE(waitUntilIdle(w, 120000));
  QApplication::processEvents();
  ASSERT_EQ(w.documents().size(), 1u);
  EXPECT_FALSE(w.documents().front()->failed()) << w.documents().front()->error().toStdString();
  EXPECT_EQ(w.documents().front()->path(), bad);
  EXPECT_EQ(w.tabs()->count(), 1);
  EXPECT_FALSE(w.tabs()->tabText(0).contains(QStringLiteral("could not open")));
  EXPECT_FALSE(w.traceWidget(0)->timeline()->isHidden());
}

TEST(AppOptions, ParsesViewsAndEdits) {
  QString err;
  auto o = parseAppOptions(
      {QStringLiteral("reservoir-gui"), QStringLiteral("a.pickle"), QStringLiteral("--screenshot"),
       QStringLiteral("x.png"), QStringLiteral("--view"), QStringLiteral("whatif"), QStringLiteral("--cleanup"),
       QStringLiteral("after:x.py:load"), QStringLiteral("--set"), QStringLiteral("expandable_segments:True"),
       QStringLiteral("--size"), QStringLiteral("1200x800")},
      &err);
  ASSERT_TRUE(o) << err.toStdString();
  EXPECT_EQ(o->view, QStringLiteral("whatif"));
  EXPECT_EQ(o->edits, QStringList{QStringLiteral("cleanup after:x.py:load")});
  EXPECT_EQ(o->settings, QStringLiteral("expandable_segments:True"));
  EXPECT_EQ(o->size, QSize(1200, 800));
  EXPECT_FALSE(
      parseAppOptions({QStringLiteral("reservoir-gui"), QStringLiteral("--view"), QStringLiteral("nonsense")}, &err));
  EXPECT_FALSE(parseAppOptions(
      {QStringLiteral("reservoir-gui"), QStringLiteral("--screenshot"), QStringLiteral("x.png")}, &err));
}

// A dump folder on the command line opens as its ranks, by the command line's rule (issue 32).
TEST(AppOptions, ADumpFolderOpensAsItsRanks) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  for (const char* it : {"iteration_2", "iteration_10"})
    for (const char* r : {"rank10", "rank2"}) {
      const QString d = dir.path() + QStringLiteral("/memory_snapshot/") + QLatin1String(it);
      ASSERT_TRUE(QDir().mkpath(d));
      QFile f(d + QLatin1Char('/') + QLatin1String(r) + QStringLiteral("_memory_snapshot.pickle"));
      ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    }
  QString err;
  auto o = parseAppOptions({QStringLiteral("reservoir-gui"), dir.path()}, &err);
  ASSERT_TRUE(o) << err.toStdString();
  const QString newest = dir.path() + QStringLiteral("/memory_snapshot/iteration_10/");
  EXPECT_EQ(o->traces, (QStringList{newest + QStringLiteral("rank2_memory_snapshot.pickle"),
                                    newest + QStringLiteral("rank10_memory_snapshot.pickle")}));
  auto older = parseAppOptions({QStringLiteral("reservoir-gui"), dir.path(), QStringLiteral("--iteration"),
                                QStringLiteral("2")},
                               &err);
  ASSERT_TRUE(older) << err.toStdString();
  EXPECT_TRUE(older->traces.front().contains(QStringLiteral("iteration_2/rank2_")));
  EXPECT_FALSE(parseAppOptions({QStringLiteral("reservoir-gui"), dir.path(), QStringLiteral("--iteration"),
                                QStringLiteral("3")},
                               &err));
  EXPECT_TRUE(err.contains(QStringLiteral("--iteration: "))) << err.toStdString();
  EXPECT_TRUE(err.contains(QStringLiteral("has no iteration 3 (its iterations: 2, 10)"))) << err.toStdString();
}

TEST(WhatIfEdits, ParsesEditTexts) {
  auto o = makeWhatIfOptions({QStringLiteral("cleanup after:x.py:load"), QStringLiteral("probe event:10")},
                             QStringLiteral("expandable_segments:True"));
  ASSERT_TRUE(o) << o.message();
  EXPECT_EQ(o->edits.size(), 2u);
  EXPECT_TRUE(o->settings.has_value());
  EXPECT_FALSE(makeWhatIfOptions({QStringLiteral("explode now")}, {}));
  EXPECT_FALSE(makeWhatIfOptions({}, QStringLiteral("no_such_setting:1")));
}

// The GUI's export runs the edited run on the device every entry point chooses: here the
// capacity the recorded oom implies, so the exported run fails where runWhatIf's does.
TEST(GuiExport, TheExportedRunIsTheWhatIfRun) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  const std::string trace = test::sharedTrace("synth/roundup-s4.pickle").string();
  auto loaded = replay::loadTraceFile(trace, std::nullopt, nullptr, {});
  ASSERT_TRUE(loaded) << loaded.message();
  std::shared_ptr<const replay::LoadStage> owner = std::move(*loaded);
  auto stage = replay::buildModelStage(*owner, 4096, nullptr, {});
  ASSERT_TRUE(stage) << stage.message();
  ModelPlot plot;
  plot.model = std::move(*stage);
  const QStringList edits{QStringLiteral("cleanup before:synth.py:main")};
  const QString settings;  // the recorded ones
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("edited.pickle"));
  const Status st = exportWhatIfSnapshot(plot, edits, settings, path);
  ASSERT_TRUE(st.ok()) << st.message();

  auto options = makeWhatIfOptions(edits, settings);
  ASSERT_TRUE(options) << options.message();
  auto rep = replay::runWhatIf(owner->trace.snapshot, owner->device_index, owner->environment(), *options);
  ASSERT_TRUE(rep) << rep.message();
  ASSERT_TRUE(rep->whatif.oom.has_value());  // the capacity the recorded oom implies is reached

  auto exported = replay::readTrace(path.toStdString());
  ASSERT_TRUE(exported) << exported.message();
  auto prepared =
      replay::prepareTrace(exported->snapshot, exported->snap().busiestDevice(), replay::ReplayEnvironment{});
  ASSERT_TRUE(prepared) << prepared.message();
  EXPECT_EQ(prepared->recorded_peak_reserved, rep->whatif.peak_reserved.bytes);
  EXPECT_TRUE(prepared->derived_capacity.has_value());  // the exported run has the oom too
}

}  // namespace
}  // namespace reservoir::gui
