// The segment timeline tab, headless: segments and expandable segments' mapped pages as bands
// stacked by address, the hover naming the segment and the block under the mouse, zoom and the
// cursor.
#include <gtest/gtest.h>

#include <QApplication>
#include <QTest>
#include <QWheelEvent>

#include "app/format.h"
#include "app/screenshot.h"
#include "app/trace_document.h"
#include "test_paths.h"
#include "widgets/main_window.h"
#include "widgets/segment_timeline.h"
#include "widgets/trace_widget.h"

namespace reservoir::gui {
namespace {

QString sample(const char* rel) { return QString::fromStdString((test::samplesDir() / rel).string()); }

class SegmentTimelineTest : public ::testing::Test {
 protected:
  void open(const char* rel) {
    window_ = std::make_unique<MainWindow>();
    window_->setBatchMode(true);
    window_->resize(1400, 900);
    window_->openFiles({sample(rel)});
    window_->show();
    ASSERT_TRUE(waitUntilIdle(*window_, 120000));
    window_->traceWidget(0)->showTab(TraceWidget::Tab::kSegments);
    view_ = window_->traceWidget(0)->segmentTimeline();
    ASSERT_NE(view_, nullptr);
    view_->resize(1200, 500);
    view_->repaint();
    ASSERT_NE(view_->history(), nullptr) << view_->error().toStdString();
  }
  // The middle of the span's life and of its bytes, in the widget.
  QPoint middle(std::uint32_t begin, std::uint32_t end, std::uint64_t addr, std::uint64_t size) const {
    const auto p = view_->pointOf((begin + end) / 2, addr + size / 2);
    EXPECT_TRUE(p.has_value());
    return p ? p->toPoint() : QPoint();
  }
  std::unique_ptr<MainWindow> window_;
  SegmentTimelineView* view_ = nullptr;
};

TEST_F(SegmentTimelineTest, ExpandableSegmentsMappedPagesAndTheirBlocks) {
  open("resume-expandable/resume-main.rank0.pickle");
  const auto& h = *view_->history();
  // The largest mapped range, and the largest block with a stack of those alive long enough to
  // be a few pixels wide.
  const replay::SegmentSpan* seg = nullptr;
  for (const auto& s : h.segments)
    if (s.expandable && (!seg || s.size > seg->size)) seg = &s;
  ASSERT_NE(seg, nullptr) << "no mapped pages in an expandable-segments trace";
  const replay::BlockSpan* blk = nullptr;
  for (const auto& b : h.blocks)
    if (b.stack.valid() && b.end - b.begin > 10 * view_->xAxis().unitsPerPixel() && (!blk || b.size > blk->size))
      blk = &b;
  ASSERT_NE(blk, nullptr);
  const QString on_seg = view_->hoverText(middle(seg->begin, seg->end, seg->addr, seg->size));
  EXPECT_TRUE(on_seg.contains(QStringLiteral("expandable"))) << on_seg.toStdString();
  EXPECT_TRUE(on_seg.contains(QStringLiteral("stream"))) << on_seg.toStdString();
  EXPECT_TRUE(on_seg.contains(QStringLiteral("pool"))) << on_seg.toStdString();
  const QString on_blk = view_->hoverText(middle(blk->begin, blk->end, blk->addr, blk->size));
  EXPECT_TRUE(on_blk.contains(sizeText(static_cast<std::int64_t>(blk->size)))) << on_blk.toStdString();
  EXPECT_TRUE(on_blk.contains(QStringLiteral("stack top: "))) << on_blk.toStdString();
  const auto& snap = window_->documents()[0]->recorded()->trace->snapshot();
  EXPECT_TRUE(on_blk.contains(topUserFrame(snap, blk->stack).toHtmlEscaped())) << on_blk.toStdString();
  // The block is drawn there in its stack's colour (the rastered block layer).
  const QRgb colour = window_->documents()[0]->recorded()->stack_colour.at(blk->stack.value());
  ASSERT_EQ(qAlpha(colour), 255);
  const QImage img = view_->grab().toImage();
  EXPECT_EQ(img.pixel(middle(blk->begin, blk->end, blk->addr, blk->size)) & 0xffffffu, colour & 0xffffffu);
  // Outside the plot: nothing.
  EXPECT_TRUE(view_->hoverText(QPoint(2, 2)).isEmpty());
}

TEST_F(SegmentTimelineTest, SegmentsDrawnStackedAndZoomable) {
  open("resume-tiny/resume-main.rank0.pickle");
  const auto& h = *view_->history();
  ASSERT_FALSE(h.segments.empty());
  EXPECT_EQ(view_->lastDrawnSegments(), h.segments.size());  // all in view
  // A segment's band is where pointOf puts it, and its hover names it.
  const auto& s = h.segments.front();
  const QPoint at = middle(s.begin, s.end, s.addr, s.size);
  const QString text = view_->hoverText(at);
  EXPECT_TRUE(text.contains(QStringLiteral("segment:"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("default pool"))) << text.toStdString();
  EXPECT_TRUE(text.contains(addressText(s.addr))) << text.toStdString();
  const QImage img = view_->grab().toImage();
  EXPECT_NE(img.pixel(at), view_->palette().window().color().rgb());
  // The wheel zooms in around the mouse; a double click shows everything again.
  const Axis full = view_->xAxis();
  QWheelEvent wheel(QPointF(at), QPointF(view_->mapToGlobal(at)), QPoint(), QPoint(0, 5 * 120), Qt::NoButton,
                    Qt::NoModifier, Qt::NoScrollPhase, false);
  QApplication::sendEvent(view_, &wheel);
  EXPECT_LT(view_->xAxis().d1 - view_->xAxis().d0, (full.d1 - full.d0) * 0.5);
  QTest::mouseDClick(view_, Qt::LeftButton, {}, at);
  EXPECT_DOUBLE_EQ(view_->xAxis().d1, full.d1);
  // A click puts the cursor at the event under it.
  auto* doc = window_->documents()[0];
  doc->setCursor(0);
  QTest::mouseClick(view_, Qt::LeftButton, {}, at);
  EXPECT_NEAR(static_cast<double>(doc->cursor()), (s.begin + s.end) / 2.0, full.unitsPerPixel() + 1);
}

}  // namespace
}  // namespace reservoir::gui
