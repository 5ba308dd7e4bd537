// What a user sees in the window, headless: sweep rows arriving while the sweep runs, every
// what-if variant's edits marked on the timeline at the events they resolve to, the layout
// after resizing, and the loading stage named alike by the progress label and the header.
#include <gtest/gtest.h>

#include <QApplication>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QProgressBar>
#include <QRegularExpression>
#include <QTableView>
#include <QTableWidget>

#include "app/screenshot.h"
#include "app/trace_document.h"
#include "models/facts_model.h"
#include "reservoir/replay/annotation_alignment.h"
#include "reservoir/replay/whatif.h"
#include "test_paths.h"
#include "widgets/compare_view.h"
#include "widgets/main_window.h"
#include "widgets/sweep_dialog.h"
#include "widgets/timeline_view.h"
#include "widgets/trace_widget.h"
#include "widgets/whatif_panel.h"

namespace reservoir::gui {
namespace {

QString sample(const char* rel) { return QString::fromStdString((test::samplesDir() / rel).string()); }

class WindowTest : public ::testing::Test {
 protected:
  void open(const QStringList& rels) {
    window_ = std::make_unique<MainWindow>();
    window_->setBatchMode(true);
    window_->resize(1400, 900);
    QStringList paths;
    for (const auto& r : rels) paths << sample(r.toUtf8().constData());
    window_->openFiles(paths);
    window_->show();
  }
  void SetUp() override {}
  std::unique_ptr<MainWindow> window_;
};

// Each candidate's row is in the table as soon as it is replayed, before the sweep ends; the
// final ranking then replaces the rows.
TEST_F(WindowTest, SweepRowsArriveBeforeTheSweepEnds) {
  open({QStringLiteral("resume-tiny/resume-main.rank0.pickle")});
  ASSERT_TRUE(waitUntilIdle(*window_, 120000));
  SweepDialog dialog(window_->documents()[0]);
  dialog.show();
  struct Seen {
    int rows_signalled, rows_in_table;
    bool running, finished;
    QString first_cell;
  };
  std::vector<Seen> seen;
  bool finished = false;
  int rows_at_finish = -1;
  QObject::connect(&dialog, &SweepDialog::candidateShown, [&](int rows) {
    QTableWidget* t = dialog.table();
    seen.push_back({rows, t->rowCount(), dialog.running(), finished,
                    t->item(t->rowCount() - 1, 0) ? t->item(t->rowCount() - 1, 0)->text() : QString()});
  });
  QObject::connect(&dialog, &SweepDialog::finished, [&] {
    finished = true;
    rows_at_finish = dialog.table()->rowCount();
  });
  dialog.start();
  QElapsedTimer t;
  t.start();
  while (!finished && t.elapsed() < 120000) QApplication::processEvents(QEventLoop::AllEvents, 20);
  ASSERT_TRUE(finished);
  ASSERT_NE(dialog.report(), nullptr);
  const auto& rep = *dialog.report();
  ASSERT_GT(rep.evaluated, 1u);
  ASSERT_EQ(seen.size(), rep.evaluated) << "a row per candidate while the sweep ran";
  for (std::size_t i = 0; i < seen.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_TRUE(seen[i].running) << "the row came after the sweep ended";
    EXPECT_FALSE(seen[i].finished);
    EXPECT_EQ(seen[i].rows_signalled, static_cast<int>(i) + 1);
    EXPECT_EQ(seen[i].rows_in_table, static_cast<int>(i) + 1) << "the table did not grow by the new row";
    EXPECT_FALSE(seen[i].first_cell.isEmpty());
  }
  // The arrivals are the candidates (in arrival order); the final table is the ranking.
  QStringList arrived, ranked;
  for (const auto& s : seen) arrived << s.first_cell;
  for (const auto& c : rep.candidates) ranked << QString::fromStdString(c.description);
  for (const QString& name : ranked)
    EXPECT_TRUE(std::any_of(arrived.begin(), arrived.end(), [&](const QString& a) { return a.startsWith(name); }))
        << name.toStdString() << " never arrived";
  EXPECT_EQ(rows_at_finish, static_cast<int>(rep.candidates.size()));
  EXPECT_TRUE(dialog.table()->item(0, 0)->text().startsWith(ranked.front()));
}

// The x the axis gives a boundary event (independent of the painter): event e's left edge.
double expectedX(const TimelineView* tl, std::uint32_t e) {
  const QRect plot = tl->plotArea();
  const Axis& x = tl->xAxis();
  return plot.left() + (static_cast<double>(e) - x.d0) / (x.d1 - x.d0) * plot.width();
}

// Every variant's cleanups and probes are marked at the boundaries their points resolve to,
// at the timeline's x for those events, with a short label naming the variant and the edit.
TEST_F(WindowTest, EveryVariantsEditsAreMarkedAtTheirEvents) {
  open({QStringLiteral("resume-tiny/resume-main.rank0.pickle")});
  ASSERT_TRUE(waitUntilIdle(*window_, 120000));
  auto* page = window_->traceWidget(0);
  TraceDocument* doc = page->document();
  page->whatIf()->runVariant(
      {QStringLiteral("cleanup after:state_dict_loader.py:load"), QStringLiteral("probe before:broadcast_weights")},
      QString());
  page->whatIf()->runVariant({QStringLiteral("cleanup before:broadcast_weights")}, QString());
  ASSERT_TRUE(waitUntilIdle(*window_, 120000));
  ASSERT_EQ(doc->variants().size(), 2u);
  TimelineView* tl = page->timeline();
  const auto& snap = doc->recorded()->trace->snapshot();
  const auto device = doc->recorded()->trace->device_index;
  struct Want {
    std::uint32_t event;
    QString label;
  };
  std::vector<Want> want;
  for (const auto& [point, label] :
       {std::pair{"after:state_dict_loader.py:load", "1: cleanup"}, std::pair{"before:broadcast_weights", "1: probe"},
        std::pair{"before:broadcast_weights", "2: cleanup"}}) {
    auto p = replay::parsePoint(point);
    ASSERT_TRUE(p) << p.message();
    auto gaps = replay::resolvePoint(*p, snap, device);
    ASSERT_TRUE(gaps) << gaps.message();
    ASSERT_FALSE(gaps->empty());
    for (const auto& g : *gaps) want.push_back({g.boundary, QString::fromLatin1(label)});
  }
  auto check = [&](const char* when) {
    SCOPED_TRACE(when);
    tl->repaint();
    const auto& marks = tl->lastLayout().edit_marks;
    ASSERT_FALSE(marks.empty());
    int in_view = 0;
    for (const Want& w : want) {
      const double x = expectedX(tl, w.event);
      if (x < tl->plotArea().left() || x > tl->plotArea().right()) continue;
      ++in_view;
      const auto it = std::find_if(marks.begin(), marks.end(), [&](const EditMarkDrawn& m) {
        return std::find(m.events.begin(), m.events.end(), w.event) != m.events.end();
      });
      ASSERT_NE(it, marks.end()) << "no marker for event " << w.event;
      EXPECT_NEAR(it->x, x, 1.0) << "event " << w.event;
      EXPECT_NEAR(it->x, tl->xOfEvent(w.event), 1.0);
      EXPECT_TRUE(it->label.split(QStringLiteral(", ")).contains(w.label)) << it->label.toStdString();
      EXPECT_TRUE(tl->plotArea().intersects(it->rect));
    }
    EXPECT_GT(in_view, 0);
  };
  check("whole trace");
  // Zoomed around the first cleanup, the markers move with the axis.
  const std::uint32_t e = want.front().event;
  tl->zoomToEvents(e > 20 ? e - 20 : 0, e + 20);
  check("zoomed");
}

// An interactive window opens at most at the screen's available size; a large screen keeps the
// size asked for.
TEST(WindowOpening, AtMostTheScreensAvailableSize) {
  const QSize laptop = openingSize(QSize(1600, 1000), QSize(1280, 720));
  EXPECT_LE(laptop.width(), 1280 - 16);
  EXPECT_LE(laptop.height(), 720 - 48);
  EXPECT_GE(laptop.width(), 1200);
  EXPECT_EQ(openingSize(QSize(1600, 1000), QSize(2560, 1440)), QSize(1600, 1000));
  EXPECT_EQ(openingSize(QSize(800, 600), QSize()), QSize(800, 600));
}

// Opened on a laptop's 1280x720 (the size openingSize gives it, before the window is shown), the
// facts panel takes at most a quarter of the width: the first resize came before the panel was
// visible and once left it at its full 440 px.
TEST(WindowOpening, OnALaptopTheFactsPanelOpensNarrow) {
  auto window = std::make_unique<MainWindow>();  // as the app opens it (app.cpp)
  window->resize(openingSize(QSize(1600, 1000), QSize(1280, 720)));
  window->openFiles({sample("resume-tiny/resume-main.rank0.pickle")});
  window->show();
  ASSERT_TRUE(waitUntilIdle(*window, 120000));
  QApplication::processEvents();
  EXPECT_LE(window->factsDock()->width(), window->width() / 4 + 8) << "window " << window->width();
  // The names do not push the values out of view: the values keep most of the narrow panel.
  auto* facts = qobject_cast<QTableView*>(window->factsDock()->widget());
  ASSERT_NE(facts, nullptr);
  const int view = facts->viewport()->width();
  EXPECT_LE(facts->columnWidth(0), view * 45 / 100 + 1);
  EXPECT_GE(facts->columnWidth(1), view / 2) << "values squeezed to " << facts->columnWidth(1) << " of " << view;
}

// Shrunk to 800x600 and grown back, the facts panel regains its width and shows its values
// whole; at 2560x1440 the extra space goes to the plot, whose data spans it.
TEST_F(WindowTest, LayoutAfterShrinkingAndOnALargeScreen) {
  open({QStringLiteral("resume-tiny/resume-main.rank0.pickle")});
  window_->resize(1600, 1000);
  ASSERT_TRUE(waitUntilIdle(*window_, 120000));
  QApplication::processEvents();
  QDockWidget* dock = window_->factsDock();
  auto* facts = qobject_cast<QTableView*>(dock->widget());
  ASSERT_NE(facts, nullptr);
  TimelineView* tl = window_->traceWidget(0)->timeline();
  const int dock0 = dock->width();
  const QRect plot0 = tl->plotArea();
  ASSERT_GE(dock0, 320);
  auto valuesWhole = [&](const char* when) {
    SCOPED_TRACE(when);
    const int rows = facts->model()->rowCount();
    ASSERT_GT(rows, 0);
    const QFontMetrics fm(facts->font());
    for (int r = 0; r < rows; ++r) {
      const QModelIndex v = facts->model()->index(r, 1);
      const QString text = v.data().toString();
      const QRect cell = facts->visualRect(v);
      // Word-wrapped in the cell's width (less the item's margins), the text fits its row.
      const QRect need = fm.boundingRect(QRect(0, 0, cell.width() - 8, 100000), Qt::TextWordWrap, text);
      EXPECT_LE(need.height(), cell.height() + 2) << text.toStdString() << " in " << cell.width() << " px";
      for (const QString& word : text.split(QRegularExpression(QStringLiteral("[\\s\\x{200b}]"))))
        EXPECT_LE(fm.horizontalAdvance(word), cell.width()) << "elided: " << text.toStdString();
    }
  };
  valuesWhole("1600x1000");
  window_->resize(800, 600);
  QApplication::processEvents();
  window_->resize(1600, 1000);
  QApplication::processEvents();
  EXPECT_GE(dock->width(), dock0 - 4) << "the facts panel stayed narrow";
  valuesWhole("800x600 and back");
  EXPECT_EQ(tl->plotArea().size(), plot0.size());
  window_->resize(2560, 1440);
  QApplication::processEvents();
  const QRect plot1 = tl->plotArea();
  // Most of the extra width and a good share of the extra height go to the plot.
  EXPECT_GE(plot1.width() - plot0.width(), (2560 - 1600) * 3 / 4) << plot0.width() << " -> " << plot1.width();
  EXPECT_GE(plot1.height() - plot0.height(), (1440 - 1000) / 2) << plot0.height() << " -> " << plot1.height();
  EXPECT_LE(dock->width(), 520);
  tl->repaint();
  const TimelineFrame* f = tl->frame();
  ASSERT_NE(f, nullptr);
  // The data fills the plot: a column per pixel, the recorded curve in the first and the last.
  ASSERT_EQ(static_cast<int>(f->columns.size()), plot1.width());
  ASSERT_EQ(f->reserved.size(), f->columns.size());
  EXPECT_FALSE(f->columns.front().empty() && f->columns.front().carry == ColumnRange::kNone);
  EXPECT_FALSE(f->columns.back().empty() && f->columns.back().carry == ColumnRange::kNone);
  valuesWhole("2560x1440");
}

// The progress label, the status bar and the plot's header name the same loading stage at
// every stage signal.
TEST_F(WindowTest, ProgressLabelAndHeaderSayTheSameStage) {
  open({QStringLiteral("resume-tiny/resume-main.rank0.pickle")});
  TraceDocument* doc = window_->documents()[0];
  TimelineView* tl = window_->traceWidget(0)->timeline();
  QStringList seen;
  auto check = [&](const char* signal) {
    SCOPED_TRACE(signal);
    if (!doc->loading()) {
      EXPECT_FALSE(window_->progressBar()->isVisible()) << window_->progressBar()->text().toStdString();
      return;
    }
    const QString word = doc->stageWord();
    seen << word;
    EXPECT_TRUE(window_->progressBar()->isVisible());
    EXPECT_TRUE(window_->progressBar()->text().contains(word)) << window_->progressBar()->text().toStdString();
    EXPECT_TRUE(tl->headerText().contains(word)) << tl->headerText().toStdString();
    EXPECT_TRUE(window_->statusText().contains(word)) << window_->statusText().toStdString();
    for (const QString& other : {QStringLiteral("reading"), QStringLiteral("modelling")}) {
      if (other == word) continue;
      EXPECT_FALSE(window_->progressBar()->text().contains(other));
      EXPECT_FALSE(tl->headerText().contains(other));
      EXPECT_FALSE(window_->statusText().contains(other));
    }
  };
  check("opened");
  QObject::connect(doc, &TraceDocument::progress, [&](int, double) { check("progress"); });
  QObject::connect(doc, &TraceDocument::loaded, [&] { check("loaded"); });
  QObject::connect(doc, &TraceDocument::modelled, [&] { check("modelled"); });
  ASSERT_TRUE(waitUntilIdle(*window_, 120000));
  QApplication::processEvents();
  check("idle");
  EXPECT_TRUE(seen.contains(QStringLiteral("reading")));
  EXPECT_TRUE(seen.contains(QStringLiteral("modelling")));
}

// Compare aligned on an annotation: in the plot, the k-th start of the annotation in the second
// trace falls in the pixel column of the k-th start in the first.
TEST_F(WindowTest, CompareAlignsTheKthAnnotationStarts) {
  open({QStringLiteral("resume-tiny/fresh.rank0.pickle"), QStringLiteral("resume-tiny/resume-main.rank0.pickle")});
  ASSERT_TRUE(waitUntilIdle(*window_, 120000));
  window_->showCompare();
  CompareView* cv = window_->compareView();
  const QString name = QStringLiteral("nccl:_all_gather_base");
  cv->alignOnAnnotation(name);
  ComparePlot* plot = cv->plot();
  ASSERT_TRUE(plot->alignment().has_value()) << plot->alignmentError().toStdString();
  plot->repaint();
  std::vector<std::uint32_t> starts[2];
  for (int side : {0, 1}) {
    const auto& t = *window_->documents()[static_cast<std::size_t>(side)]->recorded()->trace;
    auto s = replay::annotationStarts(t.snapshot(), t.device_index, name.toStdString());
    ASSERT_TRUE(s) << s.message();
    starts[side] = *s;
  }
  ASSERT_GE(starts[0].size(), 2u);
  ASSERT_NE(starts[0], starts[1]) << "the traces' starts are at the same events: nothing to align";
  auto columnOf = [&](int side, std::uint32_t e) {
    const auto& cols = plot->lastColumns(side);
    for (std::size_t c = 0; c < cols.size(); ++c)
      if (!cols[c].empty() && cols[c].first <= e && e < cols[c].end) return static_cast<int>(c);
    return -1;
  };
  const std::size_t n = std::min(starts[0].size(), starts[1].size());
  int checked = 0;
  for (std::size_t k = 0; k < n; ++k) {
    SCOPED_TRACE(k);
    if (k > 0 && (starts[0][k] == starts[0][k - 1] || starts[1][k] == starts[1][k - 1])) continue;
    const int ca = columnOf(0, starts[0][k]), cb = columnOf(1, starts[1][k]);
    ASSERT_GE(ca, 0);
    ASSERT_GE(cb, 0);
    EXPECT_LE(std::abs(ca - cb), 1) << "A's start " << starts[0][k] << ", B's " << starts[1][k];
    ++checked;
  }
  EXPECT_GE(checked, 2);
  // Aligned on events again, B's starts are where its event index puts them.
  cv->alignOnAnnotation(QString());
  EXPECT_FALSE(plot->alignment().has_value());
  // An annotation the traces lack says why instead of aligning.
  cv->alignOnAnnotation(QStringLiteral("no such range"));
  EXPECT_FALSE(plot->alignment().has_value());
  EXPECT_FALSE(plot->alignmentError().isEmpty());
}

}  // namespace
}  // namespace reservoir::gui
