#include "widgets/timeline_view.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPaintEngine>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include "app/format.h"
#include "app/trace_document.h"
#include "models/facts_model.h"
#include "reservoir/replay/peak_explain.h"
#include "reservoir/replay/session.h"
#include "widgets/timeline_paint.h"

namespace reservoir::gui {

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setMinimumHeight(220);
  setAttribute(Qt::WA_OpaquePaintEvent);
}

void TimelineView::setDocument(TraceDocument* doc) {
  doc_ = doc;
  connect(doc_, &TraceDocument::loaded, this, [this] { resetZoom(); });
  connect(doc_, &TraceDocument::modelled, this, &TimelineView::invalidate);
  connect(doc_, &TraceDocument::variantSelected, this, &TimelineView::invalidate);
  connect(doc_, &TraceDocument::variantsChanged, this, [this] {
    boundaries_.clear();  // a removed variant's report may go
    invalidate();
  });
  connect(doc_, &TraceDocument::cursorChanged, this, [this] { update(); });
  if (doc_->recorded()) resetZoom();
}

QRect TimelineView::plotRect(QSize size) const {
  // Under the plot: the x axis's labels, then the legend strip.
  return QRect(QPoint(78, 40), QPoint(size.width() - 20, size.height() - plotBottomMargin(fontMetrics())));
}

void TimelineView::invalidate() {
  frame_.reset();
  update();
}

void TimelineView::setTimeAxis(bool on) {
  if (time_axis_ != on && QToolTip::isVisible()) QToolTip::hideText();  // it described the other axis
  if (time_axis_ == on || !doc_ || !doc_->recorded()) {
    time_axis_ = on;
    return;
  }
  // Keep the same events in view.
  const auto& rec = *doc_->recorded();
  const auto a = eventAtDomain(rec, time_axis_, x_.d0), b = eventAtDomain(rec, time_axis_, x_.d1);
  time_axis_ = on;
  const Axis full = fullXAxis(rec, time_axis_, 1);
  x_.d0 = zoomed_ ? domainOfEvent(rec, time_axis_, a) : full.d0;
  x_.d1 = zoomed_ ? std::max(domainOfEvent(rec, time_axis_, b), x_.d0 + 1) : full.d1;
  invalidate();
}

void TimelineView::setShowBands(bool on) {
  bands_ = on;
  invalidate();
}

void TimelineView::resetZoom() {
  if (!doc_ || !doc_->recorded()) return;
  x_ = fullXAxis(*doc_->recorded(), time_axis_, 1);
  zoomed_ = false;
  y_max_.reset();
  invalidate();
}

void TimelineView::zoomY(double factor) {
  if (!doc_ || !doc_->recorded()) return;
  const double natural = naturalTop(size());
  const double top = (y_max_ ? static_cast<double>(*y_max_) : natural) * factor;
  if (top >= natural)
    y_max_.reset();
  else
    y_max_ = std::max<std::int64_t>(static_cast<std::int64_t>(top), 1024);
  invalidate();
}

double TimelineView::naturalTop(QSize size) const {
  TimelineRequest req;
  req.x = x_;
  req.time_axis = time_axis_;
  req.width = plotRect(size).width();
  req.height = plotRect(size).height();
  req.bands = false;
  req.raster_curves = false;
  const int sel = doc_->selectedVariant();
  const OpCurve* variant = nullptr;
  if (sel >= 0 && sel < static_cast<int>(doc_->variants().size()))
    variant = doc_->variants()[static_cast<std::size_t>(sel)].curve.get();
  return buildTimelineFrame(req, *doc_->recorded(), doc_->model().get(), variant, overlayCurves(nullptr)).y.d1;
}

Axis TimelineView::viewAxis(int width) const {
  Axis a = x_;
  a.p0 = 0;
  a.p1 = width;
  return a;
}

void TimelineView::zoomBy(double factor) {
  if (!doc_ || !doc_->recorded()) return;
  const QRect pr = plotRect(size());
  const Axis a = viewAxis(pr.width());
  const Axis full = fullXAxis(*doc_->recorded(), time_axis_, pr.width());
  double anchor = pr.width() / 2.0;
  if (doc_) {
    const double d = domainOfEvent(*doc_->recorded(), time_axis_, doc_->cursor());
    if (d >= x_.d0 && d <= x_.d1) anchor = a.toPixel(d);
  }
  x_ = zoomAround(a, anchor, factor, full.d0, full.d1, time_axis_ ? 10.0 : 8.0);
  zoomed_ = true;
  invalidate();
}

void TimelineView::zoomToEvents(std::uint32_t first, std::uint32_t end) {
  if (!doc_ || !doc_->recorded() || end <= first) return;
  x_.d0 = domainOfEvent(*doc_->recorded(), time_axis_, first);
  x_.d1 = std::max(domainOfEvent(*doc_->recorded(), time_axis_, end), x_.d0 + 1);
  zoomed_ = true;
  invalidate();
}

void TimelineView::ensureCursorVisible() {
  if (!doc_ || !doc_->recorded()) return;
  const double d = domainOfEvent(*doc_->recorded(), time_axis_, doc_->cursor());
  if (d >= x_.d0 && d < x_.d1) return;
  const Axis full = fullXAxis(*doc_->recorded(), time_axis_, 1);
  const double w = x_.d1 - x_.d0;
  x_.d0 = std::clamp(d - w / 2, full.d0, std::max(full.d0, full.d1 - w));
  x_.d1 = x_.d0 + w;
  invalidate();
}

TimelineFrame TimelineView::makeFrame(QSize size, bool raster_curves) const {
  const QRect pr = plotRect(size);
  TimelineRequest req;
  req.x = x_;
  req.time_axis = time_axis_;
  req.width = pr.width();
  req.height = pr.height();
  req.bands = bands_;
  req.raster_curves = raster_curves;
  req.y_max = y_max_;
  const auto model = doc_->model();
  const int sel = doc_->selectedVariant();
  const OpCurve* variant = nullptr;
  if (sel >= 0 && sel < static_cast<int>(doc_->variants().size()))
    variant = doc_->variants()[static_cast<std::size_t>(sel)].curve.get();
  return buildTimelineFrame(req, *doc_->recorded(), model.get(), variant, overlayCurves(nullptr));
}

void TimelineView::ensureFrame(QSize size) {
  if (!doc_ || !doc_->recorded()) return;
  if (frame_ && frame_size_ == size) return;
  frame_ = makeFrame(size, true);
  frame_size_ = size;
}

void TimelineView::render(QPainter& p, QSize size) {
  p.fillRect(QRect(QPoint(0, 0), size), palette().window());
  if (!doc_ || !doc_->recorded()) {
    p.drawText(QRect(QPoint(0, 0), size).adjusted(16, 0, -16, 0), Qt::AlignCenter | Qt::TextWordWrap,
               doc_ && doc_->failed() ? doc_->error() : headerText());
    return;
  }
  ensureFrame(size);
  const auto& rec = *doc_->recorded();
  TimelineDecor d;
  d.cursor = doc_->cursor();
  d.peak_event = rec.trace->series.peak_reserved_event;
  d.peak_bytes = rec.trace->series.peak_reserved;
  d.show_peak = !y_max_ || d.peak_bytes <= *y_max_;  // zoomed vertically below the peak: no marker over the title
  if (const auto m = doc_->model(); m && m->reserved_origin.known) {
    const replay::PeakOrigin& o = m->reserved_origin;
    if (o.climb.held > 0 && !o.setByItsClimb())
      d.climb = ClimbMark{o.climb.first.event, o.climb.last.event, o.climb.first.before, o.climb.first.before + o.climb.held};
  }
  const int sel = doc_->selectedVariant();
  if (sel >= 0 && sel < static_cast<int>(doc_->variants().size()))
    d.variant_name = doc_->variants()[static_cast<std::size_t>(sel)].name;
  d.edit_marks = editMarks(size);
  overlayCurves(&d.overlay_names);
  if (selecting_) d.selection = std::make_pair(select_from_, select_to_);
  d.title = headerText();
  // A vector device (SVG export) gets the curves as strokes, not as pixels of the raster.
  const bool vector = p.paintEngine() && p.paintEngine()->type() != QPaintEngine::Raster;
  if (vector)
    layout_ = paintTimeline(p, plotRect(size), makeFrame(size, false), rec, d);
  else
    layout_ = paintTimeline(p, plotRect(size), *frame_, rec, d);
}

QString TimelineView::headerText() const {
  if (!doc_) return {};
  if (!doc_->recorded()) return tr("%1: %2 the trace...").arg(doc_->title(), doc_->stageWord());
  const auto& rec = *doc_->recorded();
  const QString stage = doc_->stage() == TraceDocument::Stage::kModelling
                            ? tr("  (%1 the allocator state...)").arg(doc_->stageWord())
                            : QString();
  return QStringLiteral("%1 — device %2, %3 events%4")
      .arg(doc_->title())
      .arg(rec.trace->facts.device)
      .arg(rec.events())
      .arg(stage);
}

double TimelineView::xOfEvent(std::uint32_t e) const {
  const QRect pr = plotRect(size());
  if (!doc_ || !doc_->recorded()) return pr.left();
  return pr.left() + viewAxis(pr.width()).toPixel(domainOfEvent(*doc_->recorded(), time_axis_, e));
}

const std::vector<std::pair<std::uint32_t, QString>>& TimelineView::editBoundaries(const Variant& v) {
  auto [it, added] = boundaries_.try_emplace(v.report.get());
  if (!added) return it->second;
  const auto& rec = *doc_->recorded();
  for (const auto& e : v.report->edits) {
    auto gaps = replay::resolvePoint(e.point, rec.trace->snapshot(), rec.trace->device_index);
    if (!gaps) continue;
    const auto name = replay::editKindName(e.kind);
    const QString kind = QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size()));
    for (std::size_t i = 0; i < gaps->size() && it->second.size() < 500; ++i)
      it->second.emplace_back((*gaps)[i].boundary, kind);
  }
  return it->second;
}

std::vector<EditMark> TimelineView::editMarks(QSize size) {
  std::vector<EditMark> out;
  const auto& vs = doc_->variants();
  const int sel = doc_->selectedVariant();
  const std::vector<int> overlays = overlayIndices();
  int finished = 0;
  for (const Variant& v : vs) finished += v.report != nullptr;
  const QRect pr = plotRect(size);
  const Axis x = viewAxis(pr.width());
  const auto& rec = *doc_->recorded();
  for (int i = 0; i < static_cast<int>(vs.size()); ++i) {
    const Variant& v = vs[static_cast<std::size_t>(i)];
    if (!v.report) continue;
    // The colour of the variant's curve; a variant not drawn gets grey.
    const auto o = std::find(overlays.begin(), overlays.end(), i);
    const std::uint32_t rgb = i == sel              ? curveStyle(CurveKind::kVariant).rgb
                              : o != overlays.end() ? overlayStyle(static_cast<std::size_t>(o - overlays.begin())).rgb
                                                    : 0xff8c8c8cu;
    for (const auto& [event, kind] : editBoundaries(v)) {
      const QString label = finished > 1 ? QStringLiteral("%1: %2").arg(i + 1).arg(kind) : kind;
      out.push_back({event, x.toPixel(domainOfEvent(rec, time_axis_, event)), label, QColor::fromRgba(rgb)});
    }
  }
  return out;
}

std::vector<int> TimelineView::overlayIndices() const {
  // The newest finished variants besides the selected one.
  std::vector<int> out;
  const auto& vs = doc_->variants();
  const int sel = doc_->selectedVariant();
  for (int i = static_cast<int>(vs.size()) - 1; i >= 0 && out.size() < kMaxOverlays; --i) {
    const Variant& v = vs[static_cast<std::size_t>(i)];
    if (i != sel && v.curve && !v.running && v.error.isEmpty()) out.push_back(i);
  }
  return out;
}

std::vector<const OpCurve*> TimelineView::overlayCurves(QStringList* names) const {
  // Drawn thinner under the selected one.
  std::vector<const OpCurve*> out;
  for (int i : overlayIndices()) {
    const Variant& v = doc_->variants()[static_cast<std::size_t>(i)];
    out.push_back(v.curve.get());
    if (names) names->append(v.name);
  }
  return out;
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  render(p, size());
}

void TimelineView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  frame_.reset();
}

void TimelineView::wheelEvent(QWheelEvent* event) {
  if (!doc_ || !doc_->recorded()) return;
  const QRect pr = plotRect(size());
  const Axis a = viewAxis(pr.width());
  const double steps = event->angleDelta().y() / 120.0;
  if (event->modifiers() & Qt::ControlModifier) {
    zoomY(std::pow(0.8, steps));
    event->accept();
    return;
  }
  const Axis full = fullXAxis(*doc_->recorded(), time_axis_, pr.width());
  x_ =
      zoomAround(a, event->position().x() - pr.left(), std::pow(0.8, steps), full.d0, full.d1, time_axis_ ? 10.0 : 8.0);
  zoomed_ = true;
  invalidate();
  event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
  press_ = event->pos();
  drag_last_ = event->pos();
  selecting_ = event->button() == Qt::RightButton || (event->modifiers() & Qt::ShiftModifier);
  select_from_ = select_to_ = event->pos().x() - plotRect(size()).left();
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
  if (!press_) {
    showHover(event->pos(), event->globalPosition().toPoint());
    return;
  }
  if (selecting_) {
    select_to_ = event->pos().x() - plotRect(size()).left();
    update();
    return;
  }
  if (!doc_ || !doc_->recorded()) return;
  const QRect pr = plotRect(size());
  const Axis a = viewAxis(pr.width());
  const Axis full = fullXAxis(*doc_->recorded(), time_axis_, pr.width());
  x_ = panBy(a, event->pos().x() - drag_last_->x(), full.d0, full.d1);
  drag_last_ = event->pos();
  invalidate();
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
  const bool click = press_ && (event->pos() - *press_).manhattanLength() < 4;
  press_.reset();
  if (!doc_ || !doc_->recorded()) return;
  const QRect pr = plotRect(size());
  if (selecting_) {
    selecting_ = false;
    const int a = std::min(select_from_, select_to_), b = std::max(select_from_, select_to_);
    if (b - a >= 3) {
      Axis ax = x_;
      ax.p0 = 0;
      ax.p1 = pr.width();
      const double d0 = ax.toDomain(a), d1 = ax.toDomain(b);
      x_.d0 = d0;
      x_.d1 = d1;
      zoomed_ = true;
    }
    invalidate();
    return;
  }
  if (click && frame_) {
    const auto e = frame_->eventAtColumn(event->pos().x() - pr.left());
    if (e != ColumnRange::kNone) {
      doc_->setCursor(e);
      emit eventClicked(e);
    }
  }
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent*) { resetZoom(); }

void TimelineView::keyPressEvent(QKeyEvent* event) {
  if (!doc_) return QWidget::keyPressEvent(event);
  const std::int64_t step = (event->modifiers() & Qt::ShiftModifier) ? 100 : 1;
  switch (event->key()) {
    case Qt::Key_Right: doc_->moveCursor(step); break;
    case Qt::Key_Left: doc_->moveCursor(-step); break;
    case Qt::Key_PageDown: doc_->moveCursor(kPageEvents); break;
    case Qt::Key_PageUp: doc_->moveCursor(-kPageEvents); break;
    case Qt::Key_Home: doc_->setCursor(0); break;
    case Qt::Key_End: doc_->setCursor(0xfffffffeu); break;
    case Qt::Key_P: doc_->jumpToPeak(); break;
    case Qt::Key_Plus:
    case Qt::Key_Equal: zoomBy(0.5); break;
    case Qt::Key_Minus: zoomBy(2.0); break;
    case Qt::Key_0: resetZoom(); break;
    default: QWidget::keyPressEvent(event); return;
  }
  event->accept();
}

bool TimelineView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    showHover(help->pos(), help->globalPos());
    return true;
  }
  return QWidget::event(event);
}

QString TimelineView::hoverText(int column, double y_px) const {
  const auto& rec = *doc_->recorded();
  const auto& f = *frame_;
  const auto e = f.eventAtColumn(column);
  if (e == ColumnRange::kNone) return {};
  const auto& c = f.columns[static_cast<std::size_t>(column)];
  QString text = QStringLiteral("<b>event %1</b>").arg(e);
  if (c.end > c.first + 1) text += QStringLiteral(" (column: events %1-%2)").arg(c.first).arg(c.end - 1);
  text += QStringLiteral("<br>reserved %1, live %2")
              .arg(sizeText(rec.trace->series.reserved[e]), sizeText(rec.trace->series.live[e]));
  // The peak marker: where the peak came from, with stacks (the library's rule).
  if (const auto m = doc_->model()) {
    const auto peak = rec.trace->series.peak_reserved_event;  // where the peak marker is drawn
    // Or the climb's bracket, as the last frame drew it.
    const QRect pr = plotRect(size());
    const bool on_climb = layout_.climb.contains(QPoint(pr.left() + column, pr.top() + static_cast<int>(y_px)));
    if ((peak >= c.first && peak < c.end) || on_climb)
      text += QStringLiteral("<hr>") + peakOriginHtml(rec.trace->snapshot(), m->reserved_origin);
  }
  const auto bytes = static_cast<std::int64_t>(f.y.toDomain(y_px));
  const BandSpan* s = f.bands.offsets.empty() ? nullptr : hitBand(f.bands, static_cast<std::size_t>(column), bytes);
  if (s && s->allocation == kMergedBand) {
    text += QStringLiteral("<hr>%1 in blocks smaller than %2 (merged at this zoom; a stack's small blocks get a "
                           "band of their own where together they reach %2, blocks under %3 stay here)")
                .arg(sizeText(s->hi - s->lo), sizeText(f.bands.threshold), sizeText(f.bands.stack_floor));
  } else if (s && s->blocks > 1) {
    text += QStringLiteral("<hr><b>%1 in %2 blocks of one stack</b>, each smaller than %3 (merged at this zoom)<br>%4")
                .arg(sizeText(s->hi - s->lo))
                .arg(s->blocks)
                .arg(sizeText(f.bands.threshold))
                .arg(stackHtml(rec.trace->snapshot(), rec.trace->lifetimes.stack(s->allocation), 10));
  } else if (s) {
    const auto& l = rec.trace->lifetimes;
    const auto a = s->allocation;
    text += QStringLiteral("<hr><b>allocation #%1: %2</b><br>alive events %3 - %4<br>%5")
                .arg(a)
                .arg(sizeText(static_cast<std::int64_t>(l.size(a))))
                .arg(l.begin(a))
                .arg(l.end(a))
                .arg(stackHtml(rec.trace->snapshot(), l.stack(a), 10));
  }
  return text;
}

void TimelineView::showHover(QPoint pos, QPoint global) {
  if (!doc_ || !doc_->recorded() || !frame_) return;
  const QRect pr = plotRect(size());
  if (!pr.contains(pos)) {
    QToolTip::hideText();
    return;
  }
  const QString text = hoverText(pos.x() - pr.left(), pos.y() - pr.top());
  if (text.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(global, text, this);
}

}  // namespace reservoir::gui
