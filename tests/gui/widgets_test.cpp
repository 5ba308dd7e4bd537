// The widgets, headless: open real traces in the main window, drive each view, render
// screenshots and exports, navigate with the keyboard, and fail cleanly on a bad file.
#include <gtest/gtest.h>

#include <QApplication>
#include <QImage>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>

#include "app/export_snapshot.h"
#include "app/options.h"
#include "app/screenshot.h"
#include "app/trace_document.h"
#include "models/call_tree_model.h"
#include "models/event_filter_proxy.h"
#include "models/facts_model.h"
#include "models/segment_model.h"
#include "models/variant_model.h"
#include "reservoir/replay/session.h"
#include "reservoir/traces/reader.h"
#include "test_paths.h"
#include "widgets/callsites_view.h"
#include "widgets/compare_view.h"
#include "widgets/events_view.h"
#include "widgets/main_window.h"
#include "widgets/state_view.h"
#include "widgets/sweep_dialog.h"
#include "widgets/timeline_view.h"
#include "widgets/trace_widget.h"
#include "widgets/whatif_panel.h"

#include <QElapsedTimer>

namespace reservoir::gui {
namespace {

QString sample(const char* rel) { return QString::fromStdString((test::samplesDir() / rel).string()); }

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
    window_ = std::make_unique<MainWindow>();
    window_->setBatchMode(true);
    window_->resize(1400, 900);
    window_->openFiles(
        {sample("resume-tiny/resume-main.rank0.pickle"), sample("resume-tiny/resume-main.rank1.pickle")});
    window_->show();
    ASSERT_TRUE(waitUntilIdle(*window_, 120000));
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

TEST_F(WidgetsTest, SweepFromThePanelRanksCandidates) {
  SweepDialog dialog(window_->documents()[0]);
  dialog.start();
  QElapsedTimer t;
  t.start();
  while (dialog.running() && t.elapsed() < 120000) QApplication::processEvents(QEventLoop::AllEvents, 20);
  ASSERT_NE(dialog.report(), nullptr);
  EXPECT_GT(dialog.report()->evaluated, 0u);
  QStringList edits;
  QString settings;
  candidateToEdits({"--cleanup", "after:x.py:f", "--set", "expandable_segments:True"}, &edits, &settings);
  EXPECT_EQ(edits, QStringList{QStringLiteral("cleanup after:x.py:f")});
  EXPECT_EQ(settings, QStringLiteral("expandable_segments:True"));
}

TEST(WidgetsBadFile, ShowsTheReadersMessage) {
  QTemporaryDir dir;
  const QString bad = dir.filePath(QStringLiteral("bad.pickle"));
  QFile f(bad);
  ASSERT_TRUE(f.open(QIODevice::WriteOnly));
  f.write("this is not a pickle");
  f.close();
  MainWindow w;
  w.setBatchMode(true);
  w.openFiles({bad});
  ASSERT_TRUE(waitUntilIdle(w, 30000));
  ASSERT_EQ(w.errors().size(), 1);
  EXPECT_TRUE(w.errors()[0].contains(QStringLiteral("bad.pickle"))) << w.errors()[0].toStdString();
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
