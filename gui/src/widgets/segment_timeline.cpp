#include "widgets/segment_timeline.h"

#include <algorithm>
#include <cmath>

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include "app/format.h"
#include "app/trace_document.h"
#include "widgets/timeline_paint.h"

namespace reservoir::gui {

namespace {

const QColor kSegmentFill(214, 222, 235), kExpandableFill(206, 232, 214), kSegmentEdge(120, 130, 150);

}  // namespace

SegmentTimelineView::SegmentTimelineView(TraceDocument* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setMinimumHeight(220);
  connect(doc, &TraceDocument::loaded, this, [this] {
    stale_ = true;
    update();
  });
  connect(doc, &TraceDocument::modelled, this, qOverload<>(&QWidget::update));
  connect(doc, &TraceDocument::cursorChanged, this, qOverload<>(&QWidget::update));
  stale_ = doc->recorded() != nullptr;
}

// Built when first drawn (a tab never opened costs nothing).
void SegmentTimelineView::rebuild() {
  stale_ = false;
  history_.reset();
  error_.clear();
  lanes_ = {};
  if (!doc_ || !doc_->recorded()) return;
  const auto& t = *doc_->recorded()->trace;
  auto h = replay::segmentHistory(t.snapshot(), t.device_index);
  if (!h) {
    error_ = QString::fromStdString(h.message());
  } else {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    ranges.reserve(h->segments.size());
    for (const auto& s : h->segments) ranges.emplace_back(s.addr, s.size);
    lanes_ = stackAddresses(ranges);
    history_ = std::move(*h);
    segment_pos_.clear();
    for (const auto& sg : history_->segments) segment_pos_.push_back(lanes_.position(sg.addr));
    chunk_end_.assign((history_->blocks.size() + kBlockChunk - 1) / kBlockChunk, 0);
    for (std::size_t i = 0; i < history_->blocks.size(); ++i)
      chunk_end_[i / kBlockChunk] = std::max(chunk_end_[i / kBlockChunk], history_->blocks[i].end);
  }
  resetZoom();
}

QRect SegmentTimelineView::plotArea() const {
  return QRect(QPoint(78, 40), QPoint(width() - 20, height() - plotBottomMargin(fontMetrics())));
}

Axis SegmentTimelineView::fullX() const {
  const double n = history_ ? static_cast<double>(std::max<std::size_t>(history_->events, 1)) : 1.0;
  return Axis{0, n, 0, static_cast<double>(plotArea().width())};
}

Axis SegmentTimelineView::yAxis() const {
  return Axis{0, static_cast<double>(std::max<std::uint64_t>(lanes_.total, 1)),
              static_cast<double>(plotArea().height()), 0};
}

void SegmentTimelineView::resetZoom() {
  x_ = fullX();
  update();
}

void SegmentTimelineView::zoomBy(double factor, double x) {
  if (!history_) return;
  const Axis full = fullX();
  Axis a = x_;
  a.p1 = full.p1;
  x_ = zoomAround(a, x, factor, full.d0, full.d1, 8.0);
  update();
}

std::optional<QPointF> SegmentTimelineView::pointOf(std::uint32_t event, std::uint64_t addr) const {
  const auto pos = lanes_.position(addr);
  if (!pos) return std::nullopt;
  const QRect pr = plotArea();
  return QPointF(pr.left() + x_.toPixel(static_cast<double>(event) + 0.5),
                 pr.top() + yAxis().toPixel(static_cast<double>(*pos) + 0.5));
}

bool SegmentTimelineView::hit(QPoint pos, std::uint32_t& event, std::uint64_t& addr) const {
  const QRect pr = plotArea();
  if (!history_ || !pr.contains(pos)) return false;
  const double e = x_.toDomain(pos.x() - pr.left() + 0.5);
  const double b = yAxis().toDomain(pos.y() - pr.top() + 0.5);
  if (e < 0 || e >= static_cast<double>(history_->events) || b < 0) return false;
  const auto a = lanes_.address(static_cast<std::uint64_t>(b));
  if (!a) return false;
  event = static_cast<std::uint32_t>(e);
  addr = *a;
  return true;
}

void SegmentTimelineView::paintEvent(QPaintEvent*) {
  if (stale_) rebuild();
  QPainter p(this);
  p.fillRect(rect(), palette().window());
  if (!history_) {
    const QString why = !error_.isEmpty() ? error_ : doc_ ? tr("%1 the trace...").arg(doc_->stageWord()) : QString();
    p.drawText(rect(), Qt::AlignCenter, why);
    return;
  }
  const QRect plot = plotArea();
  if (x_.p1 != plot.width()) x_.p1 = plot.width();  // resized
  p.fillRect(plot, QColor(252, 252, 253));
  paintYAxis(p, plot, yAxis());
  paintXAxis(p, plot, x_, false, 0);
  paintSpans(p, plot);
  paintCursor(p, plot);
  p.setPen(QColor(0, 0, 0, 70));
  p.setBrush(Qt::NoBrush);
  p.drawRect(plot.adjusted(0, 0, -1, -1));
  p.setPen(QColor(40, 40, 40));
  const QString title = tr("%1 — %2 reserved ranges in %3 lanes by address, %4 blocks")
                            .arg(doc_->title())
                            .arg(history_->segments.size())
                            .arg(lanes_.lanes.size())
                            .arg(history_->blocks.size());
  p.drawText(QRect(plot.left(), 8, plot.width(), 20), Qt::AlignLeft,
             fontMetrics().elidedText(title, Qt::ElideRight, plot.width()));
  paintLegendRow(p, QRect(plot.left(), legendTop(plot, fontMetrics()), plot.width(), legendStripHeight(fontMetrics())),
                 {{tr("segment (cudaMalloc)"), QPen(kSegmentFill, 8)},
                  {tr("expandable segment: mapped pages"), QPen(kExpandableFill, 8)},
                  {tr("allocated block (colour of its stack)"), QPen(QColor(150, 110, 200), 8)}});
}

// Each span as a rectangle [begin, end) x [its lane position]; those out of view are skipped,
// and a span narrower or lower than a pixel is drawn a pixel wide.
void SegmentTimelineView::paintSpans(QPainter& p, const QRect& plot) {
  const Axis y = yAxis();
  auto rectOf = [&](std::uint32_t b, std::uint32_t e, std::uint64_t addr, std::uint64_t size) -> std::optional<QRectF> {
    const double x0 = x_.toPixel(b), x1 = x_.toPixel(e);
    if (x1 < 0 || x0 > plot.width()) return std::nullopt;
    const auto pos = lanes_.position(addr);
    if (!pos) return std::nullopt;
    const double top = y.toPixel(static_cast<double>(*pos + size)), bottom = y.toPixel(static_cast<double>(*pos));
    const double l = std::max(x0, -1.0), r = std::min(x1, plot.width() + 1.0);
    return QRectF(plot.left() + l, plot.top() + top, std::max(r - l, 1.0), std::max(bottom - top, 1.0));
  };
  p.save();
  p.setClipRect(plot);
  drawn_segments_ = 0;
  for (const auto& s : history_->segments)
    if (const auto r = rectOf(s.begin, s.end, s.addr, s.size)) {
      p.fillRect(*r, s.expandable ? kExpandableFill : kSegmentFill);
      p.setPen(kSegmentEdge);
      p.drawRect(*r);
      ++drawn_segments_;
    }
  p.restore();
  paintBlocks(p, plot);
}

std::optional<std::uint64_t> SegmentTimelineView::blockPosition(std::size_t i) const {
  const auto& b = history_->blocks[i];
  if (b.segment < segment_pos_.size() && segment_pos_[b.segment]) {
    const auto& sg = history_->segments[b.segment];
    if (b.addr >= sg.addr && b.addr - sg.addr + b.size <= sg.size) return *segment_pos_[b.segment] + (b.addr - sg.addr);
  }
  return lanes_.position(b.addr);
}

// The blocks, rastered straight into an image of the plot's size and drawn once: a QPainter
// call per block cost about 100 ns, most of a repaint on a training trace (300 k blocks), and
// would be most of a second on 20 M events. Only the runs of blocks that can reach the view
// are visited. Each block covers the pixels its rectangle rounds to, at least one.
void SegmentTimelineView::paintBlocks(QPainter& p, const QRect& plot) {
  const auto& blocks = history_->blocks;
  if (blocks.empty() || plot.width() <= 0 || plot.height() <= 0) return;
  const Axis y = yAxis();
  QImage img(plot.size(), QImage::Format_ARGB32_Premultiplied);
  img.fill(Qt::transparent);
  const int w = img.width(), h = img.height();
  const auto stride = static_cast<std::size_t>(img.bytesPerLine() / 4);
  auto* px = reinterpret_cast<QRgb*>(img.bits());
  const double first = x_.toDomain(0), last = x_.toDomain(w);
  // Blocks begun after the view's last event are out of it, and so are the rest.
  const auto stop = static_cast<std::size_t>(
      std::upper_bound(blocks.begin(), blocks.end(), last,
                       [](double v, const replay::BlockSpan& b) { return v < static_cast<double>(b.begin); }) -
      blocks.begin());
  const auto& colours = doc_->recorded()->stack_colour;
  const QRgb grey = qRgb(150, 150, 150);
  // The axes' linear maps, inlined (a call per coordinate was a fifth of the repaint).
  const double kx = (x_.p1 - x_.p0) / (x_.d1 - x_.d0), ky = (y.p1 - y.p0) / (y.d1 - y.d0);
  // Rounded to the nearest pixel and clamped to [lo, hi]; v is clamped first so that the
  // truncation below rounds (it is non-negative then).
  auto pixel = [](double v, int lo, int hi) {
    v = std::clamp(v, static_cast<double>(lo), static_cast<double>(hi));
    return static_cast<int>(v + 0.5);
  };
  for (std::size_t c = 0; c * kBlockChunk < stop; ++c) {
    if (static_cast<double>(chunk_end_[c]) < first) continue;  // every block of the run ended before the view
    const std::size_t end = std::min(stop, (c + 1) * kBlockChunk);
    for (std::size_t i = c * kBlockChunk; i < end; ++i) {
      const auto& b = blocks[i];
      const double x0 = x_.p0 + (b.begin - x_.d0) * kx, x1 = x_.p0 + (b.end - x_.d0) * kx;
      if (x1 < 0 || x0 > w) continue;
      const auto pos = blockPosition(i);
      if (!pos) continue;
      const double top = y.p0 + (static_cast<double>(*pos + b.size) - y.d0) * ky;
      const double bottom = y.p0 + (static_cast<double>(*pos) - y.d0) * ky;
      const int c0 = pixel(x0, 0, w - 1);
      const int c1 = std::max(pixel(x1, 0, w), c0 + 1);
      const int r0 = pixel(top, 0, h - 1);
      const int r1 = std::max(pixel(bottom, 0, h), r0 + 1);
      const bool known = b.stack.valid() && b.stack.value() < colours.size();
      const QRgb colour = known ? qPremultiply(colours[b.stack.value()]) : grey;
      for (int r = r0; r < r1; ++r) {
        QRgb* row = px + static_cast<std::size_t>(r) * stride;
        std::fill(row + c0, row + c1, colour);
      }
    }
  }
  p.drawImage(plot.topLeft(), img);
}

void SegmentTimelineView::paintCursor(QPainter& p, const QRect& plot) {
  const double x = x_.toPixel(static_cast<double>(doc_->cursor()) + 0.5);
  if (x < 0 || x > plot.width()) return;
  p.setPen(QPen(QColor(200, 30, 30), 1.0));
  p.drawLine(QPointF(plot.left() + x, plot.top()), QPointF(plot.left() + x, plot.bottom()));
}

QString SegmentTimelineView::segmentText(std::uint32_t i) const {
  const auto& s = history_->segments[i];
  const QString pool =
      s.pool.isDefault() ? tr("default pool") : tr("private pool (%1, %2)").arg(s.pool.first).arg(s.pool.second);
  return tr("<b>%1 %2</b> at %3<br>stream %4, %5<br>events %6 - %7")
      .arg(s.expandable ? tr("mapped pages of an expandable segment:") : tr("segment:"))
      .arg(sizeText(static_cast<std::int64_t>(s.size)))
      .arg(addressText(s.addr))
      .arg(s.stream)
      .arg(pool)
      .arg(s.begin)
      .arg(s.end >= history_->events ? tr("end") : QString::number(s.end - 1));
}

QString SegmentTimelineView::blockText(std::uint32_t i) const {
  const auto& b = history_->blocks[i];
  const auto& snap = doc_->recorded()->trace->snapshot();
  const QString top = topUserFrame(snap, b.stack);
  return tr("<b>allocation %1</b> at %2, events %3 - %4<br>%5")
      .arg(sizeText(static_cast<std::int64_t>(b.size)))
      .arg(addressText(b.addr))
      .arg(b.begin)
      .arg(b.end >= history_->events ? tr("end") : QString::number(b.end - 1))
      .arg(top.isEmpty() ? tr("(no stack: allocated before the trace's first event, or recorded without frames)")
                         : tr("stack top: %1").arg(top.toHtmlEscaped()));
}

QString SegmentTimelineView::hoverText(QPoint pos) const {
  std::uint32_t e = 0;
  std::uint64_t addr = 0;
  if (!hit(pos, e, addr)) return {};
  const std::uint32_t s = history_->segmentAt(e, addr);
  if (s == replay::BlockSpan::kNoSegment) return tr("event %1: not reserved here").arg(e);
  QString text = tr("event %1<br>").arg(e) + segmentText(s);
  const std::uint32_t b = history_->blockAt(e, addr);
  text += QStringLiteral("<hr>") + (b == replay::SegmentHistory::kNoBlock ? tr("free") : blockText(b));
  return text;
}

void SegmentTimelineView::wheelEvent(QWheelEvent* event) {
  zoomBy(std::pow(0.8, event->angleDelta().y() / 120.0), event->position().x() - plotArea().left());
  event->accept();
}

void SegmentTimelineView::mousePressEvent(QMouseEvent* event) {
  press_ = event->pos();
  drag_last_ = event->pos();
}

void SegmentTimelineView::mouseMoveEvent(QMouseEvent* event) {
  if (!press_) {
    const QString text = hoverText(event->pos());
    if (text.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(event->globalPosition().toPoint(), text, this);
    return;
  }
  const Axis full = fullX();
  x_ = panBy(x_, event->pos().x() - drag_last_->x(), full.d0, full.d1);
  drag_last_ = event->pos();
  update();
}

void SegmentTimelineView::mouseReleaseEvent(QMouseEvent* event) {
  const bool click = press_ && (event->pos() - *press_).manhattanLength() < 4;
  press_.reset();
  const QRect pr = plotArea();
  if (click && history_ && pr.contains(event->pos())) {
    const double d = x_.toDomain(event->pos().x() - pr.left() + 0.5);
    if (d >= 0 && d < static_cast<double>(history_->events)) doc_->setCursor(static_cast<std::uint32_t>(d));
  }
}

void SegmentTimelineView::mouseDoubleClickEvent(QMouseEvent*) { resetZoom(); }

bool SegmentTimelineView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const QString text = hoverText(help->pos());
    if (text.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(help->globalPos(), text, this);
    return true;
  }
  return QWidget::event(event);
}

}  // namespace reservoir::gui
