#include "widgets/segment_map.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include "app/format.h"
#include "models/segment_model.h"

namespace reservoir::gui {

SegmentMap::SegmentMap(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(300, 160);
}

void SegmentMap::setState(std::shared_ptr<const AllocatorState> state, double scale_bytes, QString pin_stack) {
  state_ = std::move(state);
  pin_stack_ = std::move(pin_stack);
  setToolTip({});
  scale_bytes_ = scale_bytes;
  selected_ = -1;
  update();
}

void SegmentMap::setPlaceholder(QString text) {
  placeholder_ = std::move(text);
  update();
}

QString SegmentMap::placeholder() const {
  return placeholder_.isEmpty() ? tr("The allocator state appears when the model is ready.") : placeholder_;
}

void SegmentMap::setSelectedBlock(int block) {
  selected_ = block;
  update();
}

QFont SegmentMap::headlineFont() const {
  QFont bold = font();
  bold.setBold(true);
  return bold;
}

// One line, or two where the headline does not fit the width (a laptop's side-by-side panes):
// the sentence is read in full rather than cut.
int SegmentMap::headlineHeight() const {
  const QFontMetrics fm(headlineFont());
  const bool one_line = !state_ || fm.horizontalAdvance(headline()) <= width() - 20;
  return one_line ? 20 : 2 * fm.lineSpacing() + 2;
}

QRect SegmentMap::ribbonRect() const { return rect().adjusted(10, 32 + headlineHeight(), -10, -6); }

SegmentLayout SegmentMap::layout() const {
  std::vector<std::uint64_t> sizes;
  if (state_)
    for (const auto& s : state_->segments) sizes.push_back(s.size);
  const QRect r = ribbonRect();
  return layoutSegments(sizes, r.width(), std::max(1, r.height() / rowPitch()), scale_bytes_);
}

void SegmentMap::paintLegend(QPainter& p) const {
  int x = 10;
  const QFontMetrics fm(p.font());
  for (int k = 0; k < kBlockKinds; ++k) {
    const auto kind = static_cast<BlockKind>(k);
    p.fillRect(QRect(x, 8, 14, 14), blockKindColour(kind));
    p.setPen(QColor(50, 50, 50));
    const QString label = QString::fromLatin1(blockKindName(kind));
    p.drawText(QPoint(x + 18, 8 + fm.ascent()), label);
    x += 30 + fm.horizontalAdvance(label);
  }
  p.setPen(QPen(QColor(200, 0, 0), 2));
  p.drawRect(QRect(x, 9, 12, 12));
  p.setPen(QColor(50, 50, 50));
  // The long label where it fits, a short one on a narrow pane (cut, it read "a pinned segme").
  QString pins = tr("pins its segment (dashed: a pinned segment)");
  if (x + 18 + fm.horizontalAdvance(pins) > width() - 4) pins = tr("pins (dashed: pinned segment)");
  if (x + 18 + fm.horizontalAdvance(pins) > width() - 4) pins = tr("pins");
  p.drawText(QPoint(x + 18, 8 + fm.ascent()), pins);
  if (state_) {
    p.setFont(headlineFont());
    const QString sum = headline();
    const int h = headlineHeight();
    if (h == 20)
      p.drawText(QRect(10, 28, width() - 20, h), Qt::AlignLeft | Qt::AlignVCenter, sum);
    else  // wrapped; a third line's worth (a very narrow pane) is cut, and the tooltip holds it whole
      p.drawText(QRect(10, 28, width() - 20, h), Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, sum);
  }
}

QString SegmentMap::headline() const {
  if (!state_) return {};
  QString pinned;
  if (!state_->cache_known)
    pinned = tr("what empty_cache would return is not known here");
  else if (state_->pinned > 0)
    pinned = tr("empty_cache here would return %1; %2 stays cached, pinned in %3 %4")
                 .arg(sizeText(state_->releasable), sizeText(state_->pinned))
                 .arg(state_->pinned_segments)
                 .arg(state_->pinned_segments == 1 ? tr("segment") : tr("segments"));
  else
    pinned = tr("empty_cache here would return %1; nothing stays pinned").arg(sizeText(state_->releasable));
  QString s = tr("Event %1: %2 reserved in %3 segments, %4 allocated. %5.")
                  .arg(state_->event)
                  .arg(sizeText(state_->reserved))
                  .arg(state_->segments.size())
                  .arg(sizeText(state_->allocated), pinned);
  if (state_->pinned > 0 && !pin_stack_.isEmpty()) s += tr(" Mostly pinned by %1.").arg(pin_stack_);
  return s;
}

void SegmentMap::paintPinnedOutlines(QPainter& p, const SegmentLayout& l) const {
  const QRect r = ribbonRect();
  p.setPen(QPen(QColor(200, 0, 0), 1, Qt::DashLine));
  p.setBrush(Qt::NoBrush);
  for (std::size_t s = 0; s < state_->segments.size(); ++s) {
    const auto& seg = state_->segments[s];
    if (!seg.pinned) continue;
    for (const auto& piece : l.pieces(l.start[s], l.start[s] + static_cast<double>(seg.size) / l.bytes_per_px))
      p.drawRect(QRectF(r.left() + piece.x0 - 1, r.top() + piece.row * rowPitch() - 2,
                        std::max(piece.x1 - piece.x0, 0.6) + 2, rowHeight() + 4));
  }
}

void SegmentMap::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), QColor(250, 250, 251));
  paintLegend(p);
  if (!state_) {
    p.drawText(rect().adjusted(10, 0, -10, 0), Qt::AlignCenter | Qt::TextWordWrap, placeholder());
    return;
  }
  const QRect r = ribbonRect();
  const SegmentLayout l = layout();
  auto rectOf = [&](const RibbonPiece& piece) {
    return QRectF(r.left() + piece.x0, r.top() + piece.row * rowPitch(), std::max(piece.x1 - piece.x0, 0.6),
                  rowHeight());
  };
  QRectF selected_rect;
  for (std::size_t s = 0; s < state_->segments.size(); ++s) {
    const auto& seg = state_->segments[s];
    for (const auto& piece : l.pieces(l.start[s], l.start[s] + static_cast<double>(seg.size) / l.bytes_per_px))
      p.fillRect(rectOf(piece), QColor(235, 235, 238));
    const auto blocks = state_->blocksOf(seg);
    for (std::size_t k = 0; k < blocks.size(); ++k) {
      const auto& b = blocks[k];
      const std::uint64_t off = b.address - seg.address;
      const double p0 = l.position(s, off), p1 = l.position(s, std::min(off + b.size, seg.size));
      const QColor c = blockKindColour(b.kind);
      for (const auto& piece : l.pieces(p0, p1)) {
        const QRectF br = rectOf(piece);
        p.fillRect(br, c);
        if (br.width() >= 4) p.fillRect(QRectF(br.right() - 1, br.top(), 1, br.height()), QColor(255, 255, 255, 160));
        if (b.pinning) {
          p.setPen(QPen(QColor(200, 0, 0), 2));
          p.drawRect(br.adjusted(1, 1, -1, -1));
        }
        if (static_cast<int>(seg.first_block + k) == selected_) selected_rect = selected_rect.united(br);
      }
    }
    if (seg.unmapped_gap) {
      p.setPen(QColor(120, 120, 120));
      const auto pieces = l.pieces(l.start[s], l.start[s] + static_cast<double>(seg.size) / l.bytes_per_px);
      if (!pieces.empty() && pieces.front().x1 - pieces.front().x0 > 60)
        p.drawText(rectOf(pieces.front()), Qt::AlignCenter,
                   tr("unmapped %1").arg(sizeText(static_cast<std::int64_t>(blocks[0].size))));
    }
  }
  paintPinnedOutlines(p, l);
  if (!selected_rect.isNull()) {
    p.setPen(QPen(Qt::black, 2, Qt::DashLine));
    p.setBrush(Qt::NoBrush);
    p.drawRect(selected_rect.adjusted(-1, -1, 1, 1));
  }
}

int SegmentMap::blockAt(QPoint pos) const {
  if (!state_) return -1;
  const QRect r = ribbonRect();
  const int row = (pos.y() - r.top()) / rowPitch();
  if (pos.y() < r.top() || (pos.y() - r.top()) % rowPitch() >= rowHeight()) return -1;
  const SegmentLayout l = layout();
  SegmentLayout::Hit h;
  if (!l.hit(row, pos.x() - r.left(), h)) return -1;
  const auto& seg = state_->segments[h.segment];
  std::vector<std::uint64_t> offs, sizes;
  for (const auto& b : state_->blocksOf(seg)) {
    offs.push_back(b.address - seg.address);
    sizes.push_back(b.size);
  }
  const int k = gui::blockAt(offs, sizes, h.offset);
  return k < 0 ? -1 : static_cast<int>(seg.first_block) + k;
}

void SegmentMap::mousePressEvent(QMouseEvent* event) {
  const int b = blockAt(event->pos());
  if (b >= 0) {
    selected_ = b;
    update();
    emit blockClicked(b);
  }
}

bool SegmentMap::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip && state_) {
    auto* help = static_cast<QHelpEvent*>(event);
    const int b = blockAt(help->pos());
    if (b < 0 && help->pos().y() >= 28 && help->pos().y() < 28 + headlineHeight()) {  // the headline, in full
      QToolTip::showText(help->globalPos(), headline(), this);
      return true;
    }
    if (b < 0) {
      QToolTip::hideText();
      return true;
    }
    const auto& blk = state_->blocks[static_cast<std::size_t>(b)];
    QString pin;
    for (const auto& seg : state_->segments)
      if (seg.pinned && blk.address >= seg.address && blk.address < seg.address + seg.size)
        pin = tr("<br>its segment keeps %1 cached after an empty_cache%2")
                  .arg(sizeText(static_cast<std::int64_t>(seg.kept_free)),
                       blk.pinning ? tr("; this live block is one that pins it") : QString());
    QToolTip::showText(help->globalPos(),
                       tr("<b>%1</b> %2 at %3%4")
                           .arg(QString::fromLatin1(blockKindName(blk.kind)),
                                sizeText(static_cast<std::int64_t>(blk.size)), addressText(blk.address), pin),
                       this);
    return true;
  }
  return QWidget::event(event);
}

}  // namespace reservoir::gui
