// The comparison plot's mouse: zoom, pan, hover, click.
#include <cmath>

#include <QHelpEvent>
#include <QMouseEvent>
#include <QToolTip>
#include <QWheelEvent>

#include "app/format.h"
#include "app/trace_document.h"
#include "widgets/compare_plot.h"

namespace reservoir::gui {

QString ComparePlot::hoverText(int column) const {
  if (!ready() || column < 0 || column >= static_cast<int>(columns_[0].size())) return {};
  QString text;
  for (int side : {0, 1}) {
    const TraceDocument* d = side ? b_.data() : a_.data();
    const auto& cols = columns_[side];
    const auto& s = series_[side];
    const auto c = static_cast<std::size_t>(column);
    if (side) text += QStringLiteral("<br>");
    text += QStringLiteral("<b>%1</b>: ").arg(d->title().toHtmlEscaped());
    const std::uint32_t e = c < cols.size() ? cols[c].last() : ColumnRange::kNone;
    if (e == ColumnRange::kNone || c >= s.reserved.size() || !s.reserved[c].valid) {
      text += tr("no event here");
      continue;
    }
    text += tr("event %1, reserved %2").arg(e).arg(sizeText(s.reserved[c].last));
    if (c < s.allocated.size() && s.allocated[c].valid) text += tr(", allocated %1").arg(sizeText(s.allocated[c].last));
  }
  return text;
}

void ComparePlot::showHover(QPoint pos, QPoint global) {
  if (title_rect_.contains(pos) && title_shown_ != titleText()) {
    QToolTip::showText(global, titleText(), this);
    return;
  }
  const QRect pr = plotArea();
  const std::optional<int> was = hover_;
  hover_.reset();
  if (pr.contains(pos)) hover_ = pos.x() - pr.left();
  if (hover_ != was) update();
  const QString text = hover_ ? hoverText(*hover_) : QString();
  if (text.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(global, text, this);
}

void ComparePlot::moveCursors(int column) {
  for (int side : {0, 1}) {
    TraceDocument* d = side ? b_.data() : a_.data();
    const auto& cols = columns_[side];
    if (column < 0 || column >= static_cast<int>(cols.size())) continue;
    const std::uint32_t e = cols[static_cast<std::size_t>(column)].last();
    if (e != ColumnRange::kNone) d->setCursor(e);
  }
}

void ComparePlot::wheelEvent(QWheelEvent* event) {
  if (!ready()) return;
  zoomBy(std::pow(0.8, event->angleDelta().y() / 120.0), event->position().x() - plotArea().left());
  event->accept();
}

void ComparePlot::mousePressEvent(QMouseEvent* event) {
  press_ = event->pos();
  drag_last_ = event->pos();
}

void ComparePlot::mouseMoveEvent(QMouseEvent* event) {
  if (!press_ || !ready()) {
    showHover(event->pos(), event->globalPosition().toPoint());
    return;
  }
  const QRect pr = plotArea();
  const Axis full = fullAxis(pr.width());
  const Axis moved = panBy(xAxis(), event->pos().x() - drag_last_->x(), full.d0, full.d1);
  if (view_ || moved.d0 != full.d0 || moved.d1 != full.d1) view_ = std::make_pair(moved.d0, moved.d1);
  drag_last_ = event->pos();
  update();
}

void ComparePlot::mouseReleaseEvent(QMouseEvent* event) {
  const bool click = press_ && (event->pos() - *press_).manhattanLength() < 4;
  press_.reset();
  if (click && ready() && plotArea().contains(event->pos())) moveCursors(event->pos().x() - plotArea().left());
}

void ComparePlot::mouseDoubleClickEvent(QMouseEvent*) { resetZoom(); }

void ComparePlot::leaveEvent(QEvent* event) {
  if (hover_) {
    hover_.reset();
    update();
  }
  QWidget::leaveEvent(event);
}

bool ComparePlot::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    showHover(help->pos(), help->globalPos());
    return true;
  }
  return QWidget::event(event);
}

}  // namespace reservoir::gui
