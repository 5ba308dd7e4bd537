#include "widgets/compare_view.h"

#include <algorithm>

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include "app/format.h"
#include "app/trace_document.h"
#include "geometry/lod.h"
#include "widgets/timeline_paint.h"

namespace reservoir::gui {

ComparePlot::ComparePlot(QWidget* parent) : QWidget(parent) { setMinimumHeight(220); }

void ComparePlot::setDocuments(TraceDocument* a, TraceDocument* b) {
  for (auto* d : {a_.data(), b_.data()})
    if (d) disconnect(d, nullptr, this, nullptr);
  a_ = a;
  b_ = b;
  for (auto* d : {a, b})
    if (d) {
      connect(d, &TraceDocument::loaded, this, [this] {
        updateAlignment();
        update();
      });
      connect(d, &TraceDocument::modelled, this, qOverload<>(&QWidget::update));
    }
  updateAlignment();
  update();
}

void ComparePlot::setTimeAxis(bool on) {
  time_axis_ = on;
  update();
}

void ComparePlot::setAnnotation(const QString& annotation) {
  annotation_ = annotation;
  updateAlignment();
  update();
}

void ComparePlot::updateAlignment() {
  alignment_.reset();
  alignment_error_.clear();
  if (annotation_.isEmpty() || !a_ || !b_ || !a_->recorded() || !b_->recorded()) return;
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

namespace {

struct Series {
  std::vector<ColumnEnvelope> reserved, allocated;
  std::uint32_t peak_column = 0;
  std::int64_t peak = 0;
};

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

std::vector<ColumnRange> columnsOf(const RecordedPlot& r, bool time_axis, double lo, double span, int width,
                                   const replay::EventAlignment* aligned) {
  Axis x{lo, span, 0, static_cast<double>(width)};
  std::vector<ColumnRange> cols;
  if (aligned) {
    cols = alignedColumns(*aligned, x, r.events(), width);
  } else if (time_axis) {
    const double t0 = static_cast<double>(r.trace->series.time_us.empty() ? 0 : r.trace->series.time_us.front());
    x.d0 += t0;
    x.d1 += t0;
    cols = timeColumns(x, r.trace->series.time_us, width);
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

Series seriesOf(const TraceDocument& d, const std::vector<ColumnRange>& cols) {
  Series s;
  const auto& r = *d.recorded();
  s.reserved = envelope(r.reserved, cols);
  if (const auto m = d.model()) s.allocated = opEnvelope(m->allocated_lod, m->model->op_event, cols);
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

}  // namespace

void ComparePlot::render(QPainter& p, QSize size) {
  p.fillRect(QRect(QPoint(0, 0), size), palette().window());
  if (!a_ || !b_ || !a_->recorded() || !b_->recorded()) {
    p.drawText(QRect(QPoint(0, 0), size), Qt::AlignCenter,
               tr("Open two traces to compare them (File > Open, or several files on the command line)."));
    return;
  }
  // The legend goes in a strip under the x axis, as in the timeline.
  const QRect plot(QPoint(78, 40), QPoint(size.width() - 20, size.height() - plotBottomMargin(fontMetrics())));
  // On an annotation: A's event axis, B drawn through the alignment.
  const replay::EventAlignment* al = alignment_ ? &*alignment_ : nullptr;
  const bool time_axis = time_axis_ && !al;
  const double span_b =
      al ? al->toA(static_cast<double>(b_->recorded()->events())) : spanOf(*b_->recorded(), time_axis);
  const double span = std::max(spanOf(*a_->recorded(), time_axis), span_b);
  const double lo = al ? std::min(0.0, al->toA(0.0)) : 0.0;  // what B has before its first start
  columns_[0] = columnsOf(*a_->recorded(), time_axis, lo, span, plot.width(), nullptr);
  columns_[1] = columnsOf(*b_->recorded(), time_axis, lo, span, plot.width(), al);
  const Series sa = seriesOf(*a_, columns_[0]);
  const Series sb = seriesOf(*b_, columns_[1]);
  const Axis y{0, static_cast<double>(std::max({sa.peak, sb.peak, std::int64_t{1}})) * 1.08,
               static_cast<double>(plot.height()), 0};
  p.fillRect(plot, QColor(252, 252, 253));
  paintYAxis(p, plot, y);
  paintXAxis(p, plot, Axis{lo, span, 0, static_cast<double>(plot.width())}, time_axis, 0);
  const QColor ca(25, 100, 210), cb(230, 100, 0);
  // The first trace wide and pale under the second, so that equal stretches show both.
  QColor wide = ca;
  wide.setAlpha(150);
  paintCurve(p, plot, sa.reserved, y, QPen(wide, 4.0));
  paintCurve(p, plot, sb.reserved, y, QPen(cb, 1.5));
  paintCurve(p, plot, sa.allocated, y, QPen(ca.lighter(130), 1.0, Qt::DashLine));
  paintCurve(p, plot, sb.allocated, y, QPen(cb.lighter(130), 1.0, Qt::DashLine));
  p.setRenderHint(QPainter::Antialiasing);
  for (const auto* s : {&sa, &sb}) {
    const QColor c = s == &sa ? ca : cb;
    const QPointF at(plot.left() + static_cast<double>(s->peak_column) + 0.5,
                     plot.top() + y.toPixel(static_cast<double>(s->peak)));
    p.setPen(QPen(c, 2));
    p.setBrush(Qt::white);
    p.drawEllipse(at, 5, 5);
    const QString label = tr("peak %1").arg(sizeText(s->peak));
    const double w = QFontMetrics(p.font()).horizontalAdvance(label);
    const double dx = at.x() + 8 + w > plot.right() ? -8 - w : 8;
    p.drawText(at + QPointF(dx, s == &sa ? -8 : 18), label);
  }
  p.setRenderHint(QPainter::Antialiasing, false);
  paintLegendRow(p, QRect(plot.left(), legendTop(plot, fontMetrics()), plot.width(), legendStripHeight(fontMetrics())),
                 {{tr("reserved: ") + a_->title(), QPen(wide, 4)},
                  {tr("reserved: ") + b_->title(), QPen(cb, 1.5)},
                  {tr("allocated (model): ") + a_->title(), QPen(ca.lighter(130), 1, Qt::DashLine)},
                  {tr("allocated (model): ") + b_->title(), QPen(cb.lighter(130), 1, Qt::DashLine)}});
  p.setPen(QColor(0, 0, 0, 70));
  p.setBrush(Qt::NoBrush);
  p.drawRect(plot.adjusted(0, 0, -1, -1));
  QFont bold = p.font();
  bold.setBold(true);
  p.setFont(bold);
  p.setPen(QColor(40, 40, 40));
  const QString how = al ? tr("aligned on the starts of %1 (%2 in common; events of %3)")
                               .arg(annotation_)
                               .arg(al->knots.size())
                               .arg(a_->title())
                      : time_axis ? tr("aligned on time since the first event")
                                  : tr("aligned on event index");
  const QString why = alignment_error_.isEmpty() ? QString() : tr(" (cannot align: %1)").arg(alignment_error_);
  p.drawText(QRect(plot.left(), 8, plot.width(), 20), Qt::AlignLeft,
             tr("%1 vs %2 — %3%4").arg(a_->title(), b_->title(), how, why));
}

void ComparePlot::paintEvent(QPaintEvent*) {
  QPainter p(this);
  render(p, size());
}

CompareView::CompareView(QWidget* parent)
    : QWidget(parent), a_(new QComboBox(this)), b_(new QComboBox(this)), axis_(new QComboBox(this)),
      annotation_(new QComboBox(this)), plot_(new ComparePlot(this)), table_(new QTableWidget(this)) {
  axis_->addItems({tr("align on events"), tr("align on time"), tr("align on an annotation")});
  annotation_->setEditable(true);
  annotation_->setMinimumContentsLength(24);
  annotation_->setToolTip(
      tr("The annotation whose starts are put on each other (e.g. ProfilerStep#, or a "
         "record_function range such as train_step)"));
  annotation_->setEnabled(false);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Compare"), this));
  bar->addWidget(a_, 1);
  bar->addWidget(new QLabel(tr("with"), this));
  bar->addWidget(b_, 1);
  bar->addWidget(axis_);
  bar->addWidget(annotation_);
  table_->setColumnCount(4);
  table_->setHorizontalHeaderLabels({tr("fact"), tr("A"), tr("B"), tr("B - A")});
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(plot_);
  split->addWidget(table_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->addLayout(bar);
  lay->addWidget(split);
  connect(a_, &QComboBox::currentIndexChanged, this, &CompareView::refresh);
  connect(b_, &QComboBox::currentIndexChanged, this, &CompareView::refresh);
  connect(axis_, &QComboBox::currentIndexChanged, this, &CompareView::applyAxis);
  connect(annotation_, &QComboBox::currentTextChanged, this, [this] {
    if (axis_->currentIndex() == 2) applyAxis();
  });
}

void CompareView::applyAxis() {
  const int mode = axis_->currentIndex();
  annotation_->setEnabled(mode == 2);
  plot_->setTimeAxis(mode == 1);
  plot_->setAnnotation(mode == 2 ? annotation_->currentText().trimmed() : QString());
}

void CompareView::alignOnAnnotation(const QString& annotation) {
  {
    const QSignalBlocker ba(axis_), bn(annotation_);
    axis_->setCurrentIndex(annotation.isEmpty() ? 0 : 2);
    annotation_->setCurrentText(annotation);
  }
  applyAxis();
}

void CompareView::fillAnnotations(TraceDocument* a, TraceDocument* b) {
  const QSignalBlocker block(annotation_);
  const QString current = annotation_->currentText();
  annotation_->clear();
  if (a && b && a->recorded() && b->recorded()) {
    const auto& ta = *a->recorded()->trace;
    const auto& tb = *b->recorded()->trace;
    const auto in_b = replay::alignableAnnotations(tb.snapshot(), tb.device_index);
    for (const auto& name : replay::alignableAnnotations(ta.snapshot(), ta.device_index))
      if (std::find(in_b.begin(), in_b.end(), name) != in_b.end()) annotation_->addItem(QString::fromStdString(name));
  }
  annotation_->setCurrentText(current.isEmpty() && annotation_->count() ? annotation_->itemText(0) : current);
}

void CompareView::setDocuments(const std::vector<TraceDocument*>& docs) {
  docs_.assign(docs.begin(), docs.end());
  for (auto* combo : {a_, b_}) {
    const QSignalBlocker block(combo);
    combo->clear();
    for (auto* d : docs) combo->addItem(d->title());
  }
  for (auto* d : docs) {
    connect(d, &TraceDocument::loaded, this, &CompareView::refresh, Qt::UniqueConnection);
    connect(d, &TraceDocument::modelled, this, &CompareView::refresh, Qt::UniqueConnection);
  }
  choose(0, docs.size() > 1 ? 1 : 0);
}

void CompareView::choose(int a, int b) {
  const QSignalBlocker ba(a_), bb(b_);
  a_->setCurrentIndex(a);
  b_->setCurrentIndex(b);
  refresh();
}

void CompareView::refresh() {
  auto pick = [&](QComboBox* c) -> TraceDocument* {
    const int i = c->currentIndex();
    return i >= 0 && i < static_cast<int>(docs_.size()) ? docs_[static_cast<std::size_t>(i)].data() : nullptr;
  };
  TraceDocument* a = pick(a_);
  TraceDocument* b = pick(b_);
  fillAnnotations(a, b);
  plot_->setDocuments(a, b);
  applyAxis();
  table_->setRowCount(0);
  if (!a || !b || !a->recorded() || !b->recorded()) return;
  auto row = [&](const QString& name, std::int64_t va, std::int64_t vb, bool bytes) {
    const int r = table_->rowCount();
    table_->insertRow(r);
    auto text = [&](std::int64_t v) { return bytes ? sizeText(v) : QString::number(v); };
    table_->setItem(r, 0, new QTableWidgetItem(name));
    table_->setItem(r, 1, new QTableWidgetItem(text(va)));
    table_->setItem(r, 2, new QTableWidgetItem(text(vb)));
    table_->setItem(r, 3, new QTableWidgetItem(vb == va ? QStringLiteral("=") : text(vb - va)));
  };
  const auto& fa = a->recorded()->trace->series;
  const auto& fb = b->recorded()->trace->series;
  row(tr("events"), static_cast<std::int64_t>(fa.size()), static_cast<std::int64_t>(fb.size()), false);
  row(tr("peak reserved"), fa.peak_reserved, fb.peak_reserved, true);
  row(tr("peak live (requested)"), fa.peak_live, fb.peak_live, true);
  if (a->model() && b->model())
    row(tr("peak allocated (model)"), a->model()->peak_allocated, b->model()->peak_allocated, true);
  row(tr("final reserved"), fa.reserved.empty() ? 0 : fa.reserved.back(), fb.reserved.empty() ? 0 : fb.reserved.back(),
      true);
  row(tr("out-of-memory events"), static_cast<std::int64_t>(fa.ooms.size()), static_cast<std::int64_t>(fb.ooms.size()),
      false);
  row(tr("allocations"), static_cast<std::int64_t>(a->recorded()->trace->lifetimes.count()),
      static_cast<std::int64_t>(b->recorded()->trace->lifetimes.count()), false);
}

}  // namespace reservoir::gui
