// The comparison plot, headless: wheel zoom, drag pan, the hover line and each run's values
// under it, a click moving both cursors, the elided header and the two peak labels.
#include <gtest/gtest.h>

#include <QApplication>
#include <QHelpEvent>
#include <QTest>
#include <QToolTip>
#include <QWheelEvent>

#include "app/format.h"
#include "app/screenshot.h"
#include "gui_test_util.h"
#include "app/trace_document.h"
#include "test_paths.h"
#include "widgets/compare_view.h"
#include "widgets/main_window.h"

namespace reservoir::gui {
namespace {

using test_util::sample;

class CompareViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    window_ = test_util::openTinyPair();
    ASSERT_TRUE(window_);
    window_->showCompare();
    plot_ = window_->compareView()->plot();
    plot_->repaint();
  }
  void wheel(QPoint at, int delta) {
    QWheelEvent e(QPointF(at), QPointF(plot_->mapToGlobal(at)), QPoint(), QPoint(0, delta), Qt::NoButton,
                  Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(plot_, &e);
  }
  [[nodiscard]] QPoint inPlot(double fx) const {
    const QRect r = plot_->plotArea();
    return {r.left() + static_cast<int>(fx * r.width()), r.center().y()};
  }
  std::unique_ptr<MainWindow> window_;
  ComparePlot* plot_ = nullptr;
};

TEST_F(CompareViewTest, WheelZoomsDragPansDoubleClickResets) {
  const Axis full = plot_->xAxis();
  ASSERT_FALSE(plot_->zoomed());
  const QPoint at = inPlot(0.25);
  const double under = full.toDomain(at.x() - plot_->plotArea().left());
  wheel(at, 3 * 120);
  const Axis z = plot_->xAxis();
  EXPECT_LT(z.d1 - z.d0, (full.d1 - full.d0) * 0.6);
  EXPECT_NEAR(z.toDomain(at.x() - plot_->plotArea().left()), under, (full.d1 - full.d0) * 1e-6)
      << "the point under the mouse stays put";
  // Dragging right shows what is left of the view.
  QTest::mousePress(plot_, Qt::LeftButton, {}, inPlot(0.5));
  QMouseEvent move(QEvent::MouseMove, QPointF(inPlot(0.7)), QPointF(plot_->mapToGlobal(inPlot(0.7))), Qt::NoButton,
                   Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(plot_, &move);
  QTest::mouseRelease(plot_, Qt::LeftButton, {}, inPlot(0.7));
  const Axis panned = plot_->xAxis();
  EXPECT_LT(panned.d0, z.d0);
  EXPECT_NEAR(panned.d1 - panned.d0, z.d1 - z.d0, 1e-6);
  // The columns follow the view: the first column no longer starts at event 0 once zoomed in.
  plot_->repaint();
  ASSERT_FALSE(plot_->lastColumns(0).empty());
  EXPECT_GT(plot_->lastColumns(0).back().last(), 0u);
  QTest::mouseDClick(plot_, Qt::LeftButton, {}, inPlot(0.5));
  EXPECT_FALSE(plot_->zoomed());
  EXPECT_DOUBLE_EQ(plot_->xAxis().d1, full.d1);
}

TEST_F(CompareViewTest, HoverNamesEachRunsValuesAndClickMovesBothCursors) {
  QTest::mouseMove(plot_, inPlot(0.5));
  QMouseEvent move(QEvent::MouseMove, QPointF(inPlot(0.5)), QPointF(plot_->mapToGlobal(inPlot(0.5))), Qt::NoButton,
                   Qt::NoButton, Qt::NoModifier);
  QApplication::sendEvent(plot_, &move);
  ASSERT_TRUE(plot_->hoverColumn().has_value());
  const int c = *plot_->hoverColumn();
  EXPECT_EQ(c, inPlot(0.5).x() - plot_->plotArea().left());
  const QString text = plot_->hoverText(c);
  auto* a = window_->documents()[0];
  auto* b = window_->documents()[1];
  EXPECT_TRUE(text.contains(a->title())) << text.toStdString();
  EXPECT_TRUE(text.contains(b->title())) << text.toStdString();
  EXPECT_EQ(text.count(QStringLiteral("reserved")), 2) << text.toStdString();
  const std::uint32_t ea = plot_->lastColumns(0)[static_cast<std::size_t>(c)].last();
  EXPECT_TRUE(text.contains(QStringLiteral("event %1,").arg(ea))) << text.toStdString();
  EXPECT_TRUE(plot_->hoverText(-1).isEmpty());
  // The hover line is painted: the column under the mouse differs from a render without it.
  const QImage with = plot_->grab().toImage();
  QEvent leave(QEvent::Leave);
  QApplication::sendEvent(plot_, &leave);
  EXPECT_FALSE(plot_->hoverColumn().has_value());
  const QImage without = plot_->grab().toImage();
  int differ = 0;
  const int x = plot_->plotArea().left() + c;
  for (int y = plot_->plotArea().top(); y < plot_->plotArea().bottom(); ++y)
    differ += with.pixel(x, y) != without.pixel(x, y);
  EXPECT_GT(differ, plot_->plotArea().height() / 4);
  // A click puts both documents' cursors at the events under it.
  a->setCursor(0);
  b->setCursor(0);
  QTest::mouseClick(plot_, Qt::LeftButton, {}, inPlot(0.5));
  EXPECT_EQ(a->cursor(), ea);
  EXPECT_EQ(b->cursor(), plot_->lastColumns(1)[static_cast<std::size_t>(c)].last());
  EXPECT_NE(b->cursor(), 0u);
}

TEST_F(CompareViewTest, LongHeaderElidesWithTheFullTextAsTooltip) {
  window_->compareView()->alignOnAnnotation(QStringLiteral("a range neither trace has, with a long name to show"));
  plot_->resize(420, plot_->height());
  plot_->repaint();
  const QString full = plot_->titleText();
  ASSERT_TRUE(full.contains(QStringLiteral("cannot align"))) << full.toStdString();
  EXPECT_NE(plot_->shownTitle(), full);
  EXPECT_TRUE(plot_->shownTitle().endsWith(QChar(0x2026))) << plot_->shownTitle().toStdString();
  EXPECT_LE(plot_->titleRect().right(), plot_->plotArea().right() + 1);
  QHelpEvent help(QEvent::ToolTip, plot_->titleRect().center(), plot_->mapToGlobal(plot_->titleRect().center()));
  QApplication::sendEvent(plot_, &help);
  EXPECT_EQ(QToolTip::text(), full);
  // Wide enough, it is shown whole.
  window_->compareView()->alignOnAnnotation(QString());
  plot_->resize(1400, plot_->height());
  plot_->repaint();
  EXPECT_EQ(plot_->shownTitle(), plot_->titleText());
}

TEST_F(CompareViewTest, PeakLabelsDoNotOverlapAndStayInThePlot) {
  // Two ranks of one run peak at nearly the same place; also when zoomed onto the peak.
  for (double zoom : {1.0, 0.05}) {
    SCOPED_TRACE(zoom);
    if (zoom < 1) {
      const auto& cols = plot_->lastColumns(0);
      const auto peak = window_->documents()[0]->peakEvent();
      int c = 0;
      while (c + 1 < static_cast<int>(cols.size()) && cols[static_cast<std::size_t>(c)].last() < peak) ++c;
      plot_->zoomBy(zoom, c);
    }
    plot_->repaint();
    const auto& l = plot_->peakLabels();
    EXPECT_FALSE(l[0].isEmpty());
    EXPECT_FALSE(l[0].intersects(l[1])) << "A at " << l[0].x() << "," << l[0].y() << " B at " << l[1].x() << ","
                                        << l[1].y();
    for (const QRect& r : l) EXPECT_TRUE(plot_->plotArea().adjusted(-1, -1, 1, 1).contains(r));
    // Zoomed onto the peak, the label still names the run's peak.
    const auto& f = window_->documents()[0]->recorded()->trace->series;
    EXPECT_EQ(plot_->peakTexts()[0], QStringLiteral("peak %1").arg(sizeText(f.peak_reserved)));
  }
  // Zoomed away from it, the view's highest is not called the peak.
  plot_->resetZoom();
  plot_->zoomBy(0.05, 2);
  plot_->repaint();
  const auto& f = window_->documents()[0]->recorded()->trace->series;
  const QString t = plot_->peakTexts()[0];
  EXPECT_TRUE(t.startsWith(QStringLiteral("highest in view "))) << t.toStdString();
  EXPECT_TRUE(t.endsWith(QStringLiteral("(peak %1)").arg(sizeText(f.peak_reserved)))) << t.toStdString();
}

}  // namespace
}  // namespace reservoir::gui
