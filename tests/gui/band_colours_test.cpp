// The timeline's bands, headless: bands stacked one on another have clearly different colours,
// and the legend's swatch shows the colours the bands are drawn in.
#include <gtest/gtest.h>

#include <QApplication>
#include <QImage>
#include <QWheelEvent>

#include <cmath>
#include <set>

#include "app/screenshot.h"
#include "app/trace_document.h"
#include "test_paths.h"
#include "widgets/main_window.h"
#include "widgets/timeline_view.h"
#include "widgets/trace_widget.h"

namespace reservoir::gui {
namespace {

QString sample(const char* rel) { return QString::fromStdString((test::samplesDir() / rel).string()); }

double colourDistance(std::uint32_t a, std::uint32_t b) {
  double d = 0;
  for (int shift : {16, 8, 0}) {
    const double x = static_cast<double>((a >> shift) & 0xff) - static_cast<double>((b >> shift) & 0xff);
    d += x * x;
  }
  return std::sqrt(d);
}

class BandColoursTest : public ::testing::Test {
 protected:
  void SetUp() override {
    window_ = std::make_unique<MainWindow>();
    window_->setBatchMode(true);
    window_->resize(1400, 900);
    window_->openFiles({sample("resume-tiny/resume-main.rank0.pickle")});
    window_->show();
    ASSERT_TRUE(waitUntilIdle(*window_, 120000));
    tl_ = window_->traceWidget(0)->timeline();
    tl_->repaint();
    ASSERT_NE(tl_->frame(), nullptr);
  }
  std::unique_ptr<MainWindow> window_;
  TimelineView* tl_ = nullptr;
};

// Neighbouring bands of different stacks: how many pairs are drawn in nearly one colour
// (RGB distance under 40), at full view and zoomed around the peak. With each stack's colour
// hashed from its id (the rule before) 6 of the 88 pairs at full view were.
TEST_F(BandColoursTest, AdjacentBandsOfDifferentStacksDiffer) {
  const auto& rec = *window_->documents()[0]->recorded();
  const auto& lifetimes = rec.trace->lifetimes;
  const auto stack = [&](std::uint32_t a) { return lifetimes.stack(a); };
  for (double zoom : {1.0, 0.2, 0.05}) {
    SCOPED_TRACE(zoom);
    if (zoom < 1) {
      tl_->resetZoom();
      window_->documents()[0]->jumpToPeak();
      tl_->zoomBy(zoom);
      tl_->repaint();
    }
    const auto& f = *tl_->frame();
    std::size_t pairs = 0, alike = 0;
    std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
    for (std::size_t c = 0; c + 1 < f.bands.offsets.size(); ++c) {
      const auto col = f.bands.column(c);
      for (std::size_t i = 1; i < col.size(); ++i) {
        const auto a = col[i - 1].allocation, b = col[i].allocation;
        if (a == kMergedBand || b == kMergedBand || stack(a) == stack(b)) continue;
        if (!seen.emplace(a, b).second) continue;  // each neighbouring pair once
        ++pairs;
        const bool near = colourDistance(bandColour(a, &rec), bandColour(b, &rec)) < 40;
        alike += near;
        if (near)
          ADD_FAILURE() << "alike: " << a << " (blocks " << col[i - 1].blocks << ", stack " << stack(a).value()
                        << ") on " << b << " (blocks " << col[i].blocks << ", stack " << stack(b).value()
                        << "), column " << c << " event " << f.bands.event[c] << " threshold " << f.bands.threshold;
      }
    }
    ASSERT_GT(pairs, 10u);
    EXPECT_EQ(alike, 0u) << alike << " of " << pairs;
  }
}

// Every colour of the swatch's is a band colour, and the bands' main colours are in it.
TEST_F(BandColoursTest, LegendSwatchShowsTheBandColours) {
  const auto& f = *tl_->frame();
  ASSERT_FALSE(f.band_colours.empty());
  const QImage img = tl_->grab().toImage();
  const QRect legend = tl_->lastLayout().legend;
  ASSERT_FALSE(legend.isEmpty());
  std::set<std::uint32_t> in_legend;
  for (int y = legend.top(); y <= legend.bottom(); ++y)
    for (int x = legend.left(); x <= legend.right(); ++x) in_legend.insert(img.pixel(x, y) | 0xff000000u);
  for (std::uint32_t c : f.band_colours) EXPECT_TRUE(in_legend.count(c)) << std::hex << c;
  EXPECT_TRUE(in_legend.count(kMergedBandColour));
  EXPECT_FALSE(in_legend.count(0xffc8aae6u)) << "the old lavender swatch, a colour of no band";
  // And the swatch's colours are on the plot.
  std::set<std::uint32_t> on_plot;
  const QRect plot = tl_->plotArea();
  for (int y = plot.top(); y < plot.bottom(); y += 2)
    for (int x = plot.left(); x < plot.right(); x += 2) on_plot.insert(img.pixel(x, y) | 0xff000000u);
  for (std::uint32_t c : f.band_colours) EXPECT_TRUE(on_plot.count(c)) << std::hex << c;
}

// Ctrl+wheel zooms the y axis from the bottom: the small blocks merged at full height get
// bands of their own; zooming out past the curves' top, or resetting, undoes it.
TEST_F(BandColoursTest, CtrlWheelZoomsVertically) {
  const double top = tl_->frame()->y.d1;
  const auto threshold = tl_->frame()->bands.threshold;
  const QPoint at = tl_->plotArea().center();
  auto wheel = [&](int delta) {
    QWheelEvent e(QPointF(at), QPointF(tl_->mapToGlobal(at)), QPoint(), QPoint(0, delta), Qt::NoButton,
                  Qt::ControlModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(tl_, &e);
    tl_->repaint();
  };
  const Axis x = tl_->xAxis();
  wheel(4 * 120);
  ASSERT_TRUE(tl_->yZoomed());
  EXPECT_NEAR(tl_->frame()->y.d1, top * std::pow(0.8, 4), top * 0.01);
  EXPECT_LT(tl_->frame()->bands.threshold, threshold);
  EXPECT_DOUBLE_EQ(tl_->xAxis().d1, x.d1) << "a vertical zoom leaves the x axis alone";
  wheel(-10 * 120);
  EXPECT_FALSE(tl_->yZoomed());
  EXPECT_DOUBLE_EQ(tl_->frame()->y.d1, top);
  wheel(2 * 120);
  tl_->resetZoom();
  EXPECT_FALSE(tl_->yZoomed());
}

}  // namespace
}  // namespace reservoir::gui
