#include "widgets/compare_plot.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include "app/format.h"
#include "app/trace_document.h"
#include "geometry/label_place.h"
#include "widgets/timeline_paint.h"

namespace reservoir::gui {

namespace {

const QColor kColourA(25, 100, 210), kColourB(230, 100, 0);

double spanOf(const RecordedPlot& r, bool time_axis) {
  const auto& t = r.trace->series.time_us;
  return time_axis ? (t.empty() ? 1.0 : static_cast<double>(t.back() - t.front() + 1))
                   : static_cast<double>(r.events());
}

// B's events under A's pixel columns, through the alignment (event e covers [e, e+1)); a
// column before B's first event or past its last is empty.
std::vector<ColumnRange> alignedColumns(const replay::EventAlignment& al, const Axis& x, std::size_t events,
                                        int width) {
  std::vector<ColumnRange> out(static_cast<std::size_t>(std::max(width, 0)));
  const auto n = static_cast<double>(events);
  for (std::size_t c = 0; c < out.size(); ++c) {
    const double lo = al.toB(x.toDomain(static_cast<double>(c))), hi = al.toB(x.toDomain(static_cast<double>(c) + 1));
    ColumnRange& r = out[c];
    if (hi <= 0 || lo >= n) continue;  // first = end = 0, no carry: nothing to draw
    const double a = std::clamp(lo, 0.0, n), b = std::clamp(hi, 0.0, n);
    auto first = static_cast<std::uint32_t>(std::ceil(a - 1e-9));
    auto end = static_cast<std::uint32_t>(std::ceil(b - 1e-9));
    if (end <= first) {  // narrower than an event: the event it lies in
      first = static_cast<std::uint32_t>(std::floor(a));
      end = first + 1;
    }
    r.first = first;
    r.end = std::max(first, end);
    r.carry = first > 0 ? first - 1 : ColumnRange::kNone;
  }
  return out;
}

std::vector<ColumnRange> columnsOf(const RecordedPlot& r, bool time_axis, Axis x, int width,
                                   const replay::EventAlignment* aligned) {
  std::vector<ColumnRange> cols;
  if (aligned) {
    cols = alignedColumns(*aligned, x, r.events(), width);
  } else if (time_axis) {
    const double t0 = static_cast<double>(r.trace->series.time_us.empty() ? 0 : r.trace->series.time_us.front());
    x.d0 += t0;
    x.d1 += t0;
    cols = r.timeColumns(x, width);
  } else {
    cols = eventColumns(x, r.events(), width);
    // Left of event 0 (the second trace's start, aligned, can come earlier): nothing.
    for (std::size_t c = 0; c < cols.size() && x.toDomain(static_cast<double>(c) + 1) <= 0; ++c) cols[c] = {};
  }
  // Past a trace's end there is nothing to draw.
  for (auto& c : cols)
    if (c.empty() && c.carry != ColumnRange::kNone && c.carry + 1u >= r.events()) c.carry = ColumnRange::kNone;
  return cols;
}

}  // namespace

ComparePlot::Series ComparePlot::seriesOf(const TraceDocument& d, const std::vector<ColumnRange>& cols) {
  Series s;
  const auto& r = *d.recorded();
  s.reserved = envelope(r.reserved, cols);
  s.run_peak = r.trace->series.peak_reserved;
  if (const auto m = d.model()) s.allocated = opEnvelope(m->allocated_lod, m->model->opEvents(), cols);
  for (std::size_t c = 0; c < cols.size(); ++c) {
    if (!s.reserved[c].valid) {
      if (!s.allocated.empty()) s.allocated[c].valid = false;
      continue;
    }
    if (s.reserved[c].max > s.peak) {
      s.peak = s.reserved[c].max;
      s.peak_column = static_cast<std::uint32_t>(c);
    }
  }
  return s;
}

ComparePlot::ComparePlot(QWidget* parent) : QWidget(parent) {
  setMinimumHeight(220);
  setMouseTracking(true);
}

bool ComparePlot::ready() const { return a_ && b_ && a_->recorded() && b_->recorded(); }

QRect ComparePlot::plotRect(QSize size) const {
  // The legend goes in a strip under the x axis, as in the timeline.
  return QRect(QPoint(78, 40), QPoint(size.width() - 20, size.height() - plotBottomMargin(fontMetrics())));
}

void ComparePlot::setDocuments(TraceDocument* a, TraceDocument* b) {
  for (auto* d : {a_.data(), b_.data()})
    if (d) disconnect(d, nullptr, this, nullptr);
  const bool same = a == a_ && b == b_;
  a_ = a;
  b_ = b;
  for (auto* d : {a, b})
    if (d) {
      connect(d, &TraceDocument::loaded, this, [this] {
        updateAlignment();
        update();
      });
      connect(d, &TraceDocument::modelled, this, qOverload<>(&QWidget::update));
      connect(d, &TraceDocument::cursorChanged, this, qOverload<>(&QWidget::update));
    }
  if (!same) view_.reset();
  updateAlignment();
  update();
}

void ComparePlot::setTimeAxis(bool on) {
  if (on != time_axis_) view_.reset();  // another domain
  time_axis_ = on;
  update();
}

void ComparePlot::setAnnotation(const QString& annotation) {
  if (annotation != annotation_) view_.reset();
  annotation_ = annotation;
  updateAlignment();
  update();
}

void ComparePlot::updateAlignment() {
  alignment_.reset();
  alignment_error_.clear();
  if (annotation_.isEmpty() || !ready()) return;
  const auto& ta = *a_->recorded()->trace;
  const auto& tb = *b_->recorded()->trace;
  auto al = replay::alignOnAnnotation(ta.snapshot(), ta.device_index, tb.snapshot(), tb.device_index,
                                      annotation_.toStdString());
  if (!al)
    alignment_error_ = QString::fromStdString(al.message());
  else if (al->knots.empty())
    alignment_error_ = tr("the traces have no start of %1 in common").arg(annotation_);
  else
    alignment_ = std::move(*al);
}

Axis ComparePlot::fullAxis(int width) const {
  if (!ready()) return Axis{0, 1, 0, static_cast<double>(width)};
  // On an annotation: A's event axis, B drawn through the alignment.
  const replay::EventAlignment* al = alignment_ ? &*alignment_ : nullptr;
  const bool time_axis = timeAxisInUse();
  const double end_b = al ? al->toA(static_cast<double>(b_->recorded()->events())) : spanOf(*b_->recorded(), time_axis);
  const double end = std::max(spanOf(*a_->recorded(), time_axis), end_b);
  const double lo = al ? std::min(0.0, al->toA(0.0)) : 0.0;  // what B has before its first start
  return Axis{lo, std::max(end, lo + 1), 0, static_cast<double>(width)};
}

Axis ComparePlot::xAxis() const {
  Axis x = fullAxis(plotArea().width());
  if (view_) std::tie(x.d0, x.d1) = *view_;
  return x;
}

void ComparePlot::zoomBy(double factor, double x) {
  if (!ready()) return;
  const Axis full = fullAxis(plotArea().width());
  const Axis z = zoomAround(xAxis(), x, factor, full.d0, full.d1, timeAxisInUse() ? 10.0 : 8.0);
  view_ = std::make_pair(z.d0, z.d1);
  update();
}

void ComparePlot::resetZoom() {
  view_.reset();
  update();
}

void ComparePlot::render(QPainter& p, QSize size) {
  p.fillRect(QRect(QPoint(0, 0), size), palette().window());
  if (!ready()) {
    p.drawText(QRect(QPoint(0, 0), size), Qt::AlignCenter,
               tr("Open two traces to compare them (File > Open, or several files on the command line)."));
    return;
  }
  const QRect plot = plotRect(size);
  Axis x = fullAxis(plot.width());
  if (view_) std::tie(x.d0, x.d1) = *view_;
  const replay::EventAlignment* al = alignment_ ? &*alignment_ : nullptr;
  const bool time_axis = timeAxisInUse();
  columns_[0] = columnsOf(*a_->recorded(), time_axis, x, plot.width(), nullptr);
  columns_[1] = columnsOf(*b_->recorded(), time_axis, x, plot.width(), al);
  series_[0] = seriesOf(*a_, columns_[0]);
  series_[1] = seriesOf(*b_, columns_[1]);
  const Axis y{0, static_cast<double>(std::max({series_[0].peak, series_[1].peak, std::int64_t{1}})) * 1.08,
               static_cast<double>(plot.height()), 0};
  p.fillRect(plot, QColor(252, 252, 253));
  paintYAxis(p, plot, y);
  paintXAxis(p, plot, x, time_axis, 0);
  paintCurves(p, plot, y);
  paintCursorLines(p, plot);
  paintPeaks(p, plot, y);
  p.setPen(QColor(0, 0, 0, 70));
  p.setBrush(Qt::NoBrush);
  p.drawRect(plot.adjusted(0, 0, -1, -1));
  paintTitle(p, plot);
}

void ComparePlot::paintCurves(QPainter& p, const QRect& plot, const Axis& y) {
  // The first trace wide and pale under the second, so that equal stretches show both.
  QColor wide = kColourA;
  wide.setAlpha(150);
  const QPen ra(wide, 4.0), rb(kColourB, 1.5);
  const QPen aa(kColourA.lighter(130), 1.0, Qt::DashLine), ab(kColourB.lighter(130), 1.0, Qt::DashLine);
  paintCurve(p, plot, series_[0].reserved, y, ra);
  paintCurve(p, plot, series_[1].reserved, y, rb);
  paintCurve(p, plot, series_[0].allocated, y, aa);
  paintCurve(p, plot, series_[1].allocated, y, ab);
  paintLegendRow(p, QRect(plot.left(), legendTop(plot, fontMetrics()), plot.width(), legendStripHeight(fontMetrics())),
                 {{tr("reserved: ") + a_->title(), ra},
                  {tr("reserved: ") + b_->title(), rb},
                  {tr("allocated (model): ") + a_->title(), aa},
                  {tr("allocated (model): ") + b_->title(), ab}});
}

void ComparePlot::paintPeaks(QPainter& p, const QRect& plot, const Axis& y) {
  const QFontMetrics fm(p.font());
  std::vector<LabelRequest> want;
  QString text[2];
  QPointF at[2];
  for (int side : {0, 1}) {
    const Series& s = series_[side];
    at[side] = QPointF(plot.left() + static_cast<double>(s.peak_column) + 0.5,
                       plot.top() + y.toPixel(static_cast<double>(s.peak)));
    text[side] = s.peak >= s.run_peak ? tr("peak %1").arg(sizeText(s.peak))
                                      : tr("highest in view %1 (peak %2)").arg(sizeText(s.peak), sizeText(s.run_peak));
    peak_texts_[static_cast<std::size_t>(side)] = text[side];
    want.push_back({at[side].x(), at[side].y(), static_cast<double>(fm.horizontalAdvance(text[side])),
                    static_cast<double>(fm.height()), side == 1});
  }
  const LabelBox bounds{static_cast<double>(plot.left()), static_cast<double>(plot.top()),
                        static_cast<double>(plot.width()), static_cast<double>(plot.height())};
  const auto boxes = placeLabels(want, bounds);
  p.setRenderHint(QPainter::Antialiasing);
  for (int side : {0, 1}) {
    const auto& b = boxes[static_cast<std::size_t>(side)];
    p.setPen(QPen(side ? kColourB : kColourA, 2));
    p.setBrush(Qt::white);
    p.drawEllipse(at[side], 5, 5);
    peak_labels_[static_cast<std::size_t>(side)] =
        QRectF(b.x, b.y, b.w, b.h).toAlignedRect().intersected(QRect(QPoint(0, 0), size()));
    p.drawText(QRectF(b.x, b.y, b.w + 2, b.h), Qt::AlignLeft | Qt::AlignVCenter, text[side]);
  }
  p.setRenderHint(QPainter::Antialiasing, false);
}

// Each document's cursor where its event is in view (solid), and the hover line (dotted).
void ComparePlot::paintCursorLines(QPainter& p, const QRect& plot) {
  for (int side : {0, 1}) {
    const TraceDocument* d = side ? b_.data() : a_.data();
    const auto& cols = columns_[side];
    const std::uint32_t e = d->cursor();
    for (std::size_t c = 0; c < cols.size(); ++c) {
      if (cols[c].empty() || e < cols[c].first || e >= cols[c].end) continue;
      p.setPen(QPen(side ? kColourB.darker(140) : kColourA.darker(140), 1.0));
      p.drawLine(plot.left() + static_cast<int>(c), plot.top(), plot.left() + static_cast<int>(c), plot.bottom());
      break;
    }
  }
  if (hover_ && *hover_ >= 0 && *hover_ < plot.width()) {
    p.setPen(QPen(QColor(60, 60, 60, 160), 1.0, Qt::DotLine));
    p.drawLine(plot.left() + *hover_, plot.top(), plot.left() + *hover_, plot.bottom());
  }
}

QString ComparePlot::titleText() const {
  if (!ready()) return {};
  const bool time_axis = timeAxisInUse();
  const QString how = alignment_ ? tr("aligned on the starts of %1 (%2 in common; events of %3)")
                                       .arg(annotation_)
                                       .arg(alignment_->knots.size())
                                       .arg(a_->title())
                      : time_axis ? tr("aligned on time since the first event")
                                  : tr("aligned on event index");
  const QString why = alignment_error_.isEmpty() ? QString() : tr(" (cannot align: %1)").arg(alignment_error_);
  return tr("%1 vs %2 — %3%4").arg(a_->title(), b_->title(), how, why);
}

// The header, elided to the plot's width (the full text is the tooltip over it).
void ComparePlot::paintTitle(QPainter& p, const QRect& plot) {
  QFont bold = p.font();
  bold.setBold(true);
  p.setFont(bold);
  p.setPen(QColor(40, 40, 40));
  const QFontMetrics fm(bold);
  title_shown_ = fm.elidedText(titleText(), Qt::ElideRight, plot.width());
  title_rect_ = QRect(plot.left(), 8, std::min(plot.width(), fm.horizontalAdvance(title_shown_) + 2), 20);
  p.drawText(QRect(plot.left(), 8, plot.width(), 20), Qt::AlignLeft, title_shown_);
}

void ComparePlot::paintEvent(QPaintEvent*) {
  QPainter p(this);
  render(p, size());
}

}  // namespace reservoir::gui
