#include "widgets/timeline_paint.h"

#include <QHash>
#include <QPaintEngine>
#include <QPainterPath>
#include <QStaticText>

#include <cmath>

#include "app/format.h"

namespace reservoir::gui {

namespace {

// Axis, legend and marker labels repeat from frame to frame: laid out once (QStaticText),
// they are drawn from the glyph cache instead of being shaped again at every repaint.
const QStaticText& staticText(const QFont& font, const QString& text) {
  static QHash<QString, QStaticText> cache;
  QString key = font.key();
  key += QChar(0);
  key += text;
  auto it = cache.find(key);
  if (it == cache.end()) {
    if (cache.size() >= 4096) cache.clear();
    QStaticText st(text);
    st.setTextFormat(Qt::PlainText);
    st.setPerformanceHint(QStaticText::AggressiveCaching);
    st.prepare(QTransform(), font);
    it = cache.insert(key, st);
  }
  return *it;
}

}  // namespace

int labelWidth(const QPainter& p, const QString& text) {
  if (p.paintEngine() && p.paintEngine()->type() != QPaintEngine::Raster)
    return QFontMetrics(p.font()).horizontalAdvance(text);
  return static_cast<int>(std::ceil(staticText(p.font(), text).size().width()));
}

void drawLabel(QPainter& p, const QRectF& r, Qt::Alignment align, const QString& text) {
  if (p.paintEngine() && p.paintEngine()->type() != QPaintEngine::Raster) {
    p.drawText(r, static_cast<int>(align), text);  // vector output keeps real text
    return;
  }
  const QStaticText& st = staticText(p.font(), text);
  const QSizeF s = st.size();
  double x = r.left(), y = r.top();
  if (align & Qt::AlignRight)
    x = r.right() - s.width();
  else if (align & Qt::AlignHCenter)
    x = r.left() + (r.width() - s.width()) / 2;
  if (align & Qt::AlignBottom)
    y = r.bottom() - s.height();
  else if (align & Qt::AlignVCenter)
    y = r.top() + (r.height() - s.height()) / 2;
  p.drawStaticText(QPointF(x, y), st);
}

void paintYAxis(QPainter& p, const QRect& plot, const Axis& y) {
  p.save();
  const QFontMetrics fm(p.font());
  for (double v : byteTicks(y.d0, y.d1, std::max(2, plot.height() / 50))) {
    const int py = plot.top() + static_cast<int>(std::lround(y.toPixel(v)));
    p.setPen(QPen(QColor(0, 0, 0, 28), 1));
    p.drawLine(plot.left(), py, plot.right(), py);
    p.setPen(QColor(90, 90, 90));
    const QString label = sizeText(static_cast<std::int64_t>(v));
    drawLabel(p, QRect(0, py - fm.height() / 2, plot.left() - 6, fm.height()), Qt::AlignRight | Qt::AlignVCenter,
              label);
  }
  p.restore();
}

QRect paintXAxis(QPainter& p, const QRect& plot, const Axis& x, bool time_axis, std::int64_t origin) {
  p.save();
  const QFontMetrics fm(p.font());
  const double lo = x.d0 - (time_axis ? static_cast<double>(origin) : 0.0);
  const double hi = x.d1 - (time_axis ? static_cast<double>(origin) : 0.0);
  for (double v : niceTicks(lo, hi, std::max(2, plot.width() / 110))) {
    const double d = v + (time_axis ? static_cast<double>(origin) : 0.0);
    const int px = plot.left() + static_cast<int>(std::lround(x.toPixel(d)));
    p.setPen(QPen(QColor(0, 0, 0, 20), 1));
    p.drawLine(px, plot.top(), px, plot.bottom());
    p.setPen(QColor(90, 90, 90));
    const QString label =
        time_axis ? timeText(static_cast<std::int64_t>(v)) : QString::number(static_cast<qlonglong>(v));
    // Centred under its tick, but never past the plot's right edge (the last label was cut).
    const int w = labelWidth(p, label) + 4;
    const int left = std::min(px - w / 2, plot.right() + 8 - w);
    drawLabel(p, QRect(left, plot.bottom() + 4, w, fm.height()), Qt::AlignHCenter | Qt::AlignTop, label);
  }
  const QString title = time_axis ? QStringLiteral("time since the first event") : QStringLiteral("event");
  drawLabel(p, QRect(plot.left(), plot.bottom() + 4 + fm.height(), plot.width(), fm.height()), Qt::AlignHCenter, title);
  const int w = labelWidth(p, title);
  p.restore();
  return {plot.left() + (plot.width() - w) / 2, plot.bottom() + 4 + fm.height(), w, fm.height()};
}

void paintCurve(QPainter& p, const QRect& plot, const std::vector<ColumnEnvelope>& env, const Axis& y,
                const QPen& pen) {
  if (env.empty()) return;
  const auto pts = envelopePolyline(env, y, plot.left());
  if (pts.empty()) return;
  QPolygonF poly;
  poly.reserve(static_cast<qsizetype>(pts.size()));
  for (const auto& pt : pts) poly << QPointF(pt.x, pt.y + plot.top());
  // Wide or dashed pens are stroked into paths (slow on thousands of points); a 1-pixel
  // cosmetic pen takes the raster engine's fast path, so thickness is drawn as offset passes.
  QPen thin = pen;
  thin.setWidth(1);
  thin.setCosmetic(true);
  p.save();
  p.setPen(thin);
  const int passes = std::max(1, static_cast<int>(std::lround(pen.widthF())));
  for (int k = 0; k < passes; ++k) {
    p.drawPolyline(poly);
    poly.translate(0, -1);
  }
  p.restore();
}

QPen curvePen(const CurveStyle& style) {
  QPen pen(QColor::fromRgba(style.rgb), style.thickness);
  if (style.dash_on > 0) pen.setStyle(style.dash_on >= 3 ? Qt::DashLine : Qt::DotLine);
  return pen;
}

void paintLegend(QPainter& p, QPoint at, const std::vector<std::pair<QString, QPen>>& entries) {
  p.save();
  const QFontMetrics fm(p.font());
  int w = 0;
  for (const auto& e : entries) w = std::max(w, labelWidth(p, e.first));
  const QRect box(at, QSize(w + 40, static_cast<int>(entries.size()) * (fm.height() + 2) + 8));
  p.setPen(QColor(0, 0, 0, 40));
  p.setBrush(QColor(255, 255, 255, 225));
  p.drawRoundedRect(box, 4, 4);
  int yy = box.top() + 4;
  for (const auto& [label, pen] : entries) {
    QPen sample = pen;
    sample.setWidthF(std::max(2.0, pen.widthF()));
    p.setPen(sample);
    if (pen.style() == Qt::NoPen) {
      p.setBrushOrigin(box.left() + 6, yy + 3);  // a textured swatch starts at its corner
      p.fillRect(QRect(box.left() + 6, yy + 3, kLegendSwatchWidth, fm.height() - 6), pen.brush());
    } else {
      p.drawLine(box.left() + 6, yy + fm.height() / 2, box.left() + 26, yy + fm.height() / 2);
    }
    p.setPen(QColor(40, 40, 40));
    drawLabel(p, QRect(box.left() + 32, yy, w + 8, fm.height()), Qt::AlignLeft | Qt::AlignVCenter, label);
    yy += fm.height() + 2;
  }
  p.restore();
}

int legendStripHeight(const QFontMetrics& fm) { return kLegendLines * (fm.height() + 2) + 4; }

int legendTop(const QRect& plot, const QFontMetrics& fm) { return plot.bottom() + 8 + 2 * fm.height(); }

int plotBottomMargin(const QFontMetrics& fm) { return 10 + 2 * fm.height() + legendStripHeight(fm); }

QRect paintLegendRow(QPainter& p, const QRect& area, const std::vector<std::pair<QString, QPen>>& entries) {
  p.save();
  const QFontMetrics fm(p.font());
  const int line = fm.height() + 2;
  int x = area.left(), y = area.top();
  QRect used;
  for (const auto& [label, pen] : entries) {
    const int w = 26 + labelWidth(p, label) + 16;
    if (x > area.left() && x + w > area.right()) {
      x = area.left();
      y += line;
    }
    if (y + line > area.bottom() + 1) break;
    if (pen.style() == Qt::NoPen) {
      p.setBrushOrigin(x, y + 3);  // a textured swatch starts at its corner
      p.fillRect(QRect(x, y + 3, kLegendSwatchWidth, fm.height() - 6), pen.brush());
    } else {
      QPen sample = pen;
      sample.setWidthF(std::max(2.0, pen.widthF()));
      p.setPen(sample);
      p.drawLine(x, y + fm.height() / 2, x + kLegendSwatchWidth, y + fm.height() / 2);
    }
    p.setPen(QColor(40, 40, 40));
    const QRect text(x + 26, y, w - 26 - 8, fm.height());
    drawLabel(p, text, Qt::AlignLeft | Qt::AlignVCenter, label);
    used |= QRect(x, y, w - 8, fm.height());
    x += w;
  }
  p.restore();
  return used;
}

namespace {

// The bands' swatch: stripes of the colours that cover most of the bands drawn (each stack
// has its own colour), and the merged small blocks' grey; a texture one swatch wide, which the
// legend lays from the swatch's corner.
std::pair<QString, QPen> bandLegendEntry(const TimelineFrame& f, bool window) {
  std::vector<std::uint32_t> colours = f.band_colours;
  colours.push_back(kMergedBandColour);
  QImage stripes(kLegendSwatchWidth, 1, QImage::Format_RGB32);
  for (int x = 0; x < kLegendSwatchWidth; ++x)
    stripes.setPixel(x, 0, colours[static_cast<std::size_t>(x) * colours.size() / kLegendSwatchWidth]);
  QPen band(Qt::NoPen);
  band.setBrush(QBrush(stripes));
  // A window of a ring buffer: the blocks allocated before it have no alloc event, so no band;
  // the allocated curve includes them (the facts give their bytes).
  return {QStringLiteral("live blocks (bands, a colour per stack; < %1 summed per stack, the rest grey%2)")
              .arg(sizeText(f.bands.threshold),
                   window ? QStringLiteral("; blocks older than the window, never freed: no band") : QString()),
          band};
}

void paintAnnotations(QPainter& p, const QRect& plot, const TimelineFrame& f, const RecordedPlot& rec) {
  p.save();
  const QFontMetrics fm(p.font());
  int free_from = plot.left();
  QVector<QLine> ticks;
  ticks.reserve(static_cast<qsizetype>(f.annotations.size()));
  for (const auto& m : f.annotations)
    ticks.append(QLine(plot.left() + m.column, plot.top() - 8, plot.left() + m.column, plot.top()));
  p.setPen(QPen(QColor(120, 120, 160, 170), 1));
  p.drawLines(ticks);
  for (const auto& m : f.annotations) {
    const int x = plot.left() + m.column;
    if (x < free_from) continue;  // no room for a label: measure nothing
    const auto& a = rec.trace->annotations[m.first];
    const QString label = m.count > 1 ? QStringLiteral("%1 +%2").arg(QString::fromStdString(a.name)).arg(m.count - 1)
                                      : QString::fromStdString(a.name);
    const int w = labelWidth(p, label);
    if (x >= free_from && x + w < plot.right()) {
      p.setPen(QColor(80, 80, 130));
      drawLabel(p, QRectF(x + 2, plot.top() - 10 - fm.ascent(), w + 4, fm.height()), Qt::AlignLeft | Qt::AlignTop,
                label);
      free_from = x + w + 12;
    }
  }
  p.restore();
}

void paintOoms(QPainter& p, const QRect& plot, const TimelineFrame& f) {
  p.save();
  p.setPen(Qt::NoPen);
  p.setBrush(QColor(220, 0, 0));
  for (const auto& m : f.ooms) {
    const double x = plot.left() + m.column + 0.5;
    QPolygonF tri;
    tri << QPointF(x, plot.bottom() - 10) << QPointF(x - 6, plot.bottom()) << QPointF(x + 6, plot.bottom());
    p.drawPolygon(tri);
    p.setPen(QPen(QColor(220, 0, 0, 120), 1, Qt::DashLine));
    p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom() - 10));
    p.setPen(Qt::NoPen);
  }
  if (!f.ooms.empty()) {
    p.setPen(QColor(200, 0, 0));
    p.drawText(QPoint(plot.left() + f.ooms.front().column + 8, plot.bottom() - 2), QStringLiteral("OOM"));
  }
  p.restore();
}

int columnOfEvent(const TimelineFrame& f, std::uint32_t e) {
  for (std::size_t c = 0; c < f.columns.size(); ++c) {
    const auto& col = f.columns[c];
    if (e < col.end || (col.empty() && e <= col.carry)) return static_cast<int>(c);
  }
  return -1;
}

QRect paintPeak(QPainter& p, const QRect& plot, const TimelineFrame& f, const TimelineDecor& d) {
  const int c = columnOfEvent(f, d.peak_event);
  if (c < 0 || (!f.columns.empty() && d.peak_event + 1 < f.columns.front().first)) return {};
  const double x = plot.left() + c + 0.5;
  const double y = plot.top() + f.y.toPixel(static_cast<double>(d.peak_bytes));
  p.save();
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(QPen(QColor(200, 30, 30), 1.5));
  p.setBrush(QColor(255, 255, 255));
  QPolygonF diamond;
  diamond << QPointF(x, y - 7) << QPointF(x + 7, y) << QPointF(x, y + 7) << QPointF(x - 7, y);
  p.drawPolygon(diamond);
  const QString label = QStringLiteral("peak reserved %1 (event %2)").arg(sizeText(d.peak_bytes)).arg(d.peak_event);
  const QFontMetrics fm(p.font());
  const int w = labelWidth(p, label);
  const double lx = x + 10 + w < plot.right() ? x + 10 : x - 10 - w;
  // Below the diamond when the label would leave the plot at its top.
  const double ly = y - 8 - fm.ascent() < plot.top() ? y + 10 : y - 8 - fm.ascent();
  const QRectF box(lx, ly, w + 4, fm.height());
  p.setPen(QColor(170, 20, 20));
  drawLabel(p, box, Qt::AlignLeft | Qt::AlignTop, label);
  p.restore();
  return box.toAlignedRect();
}

// The climb that made the peak: a bracket over its columns, from the reserved bytes before it to
// what it still holds at the peak, in the peak marker's red.
QRect paintClimb(QPainter& p, const QRect& plot, const TimelineFrame& f, const ClimbMark& m) {
  const int c0 = columnOfEvent(f, m.first_event), c1 = columnOfEvent(f, m.last_event);
  if (c0 < 0 || c1 < 0) return {};
  const int y0 = plot.top() + static_cast<int>(f.y.toPixel(static_cast<double>(m.to)));
  const int y1 = plot.top() + static_cast<int>(f.y.toPixel(static_cast<double>(m.from)));
  const QRect box(QPoint(plot.left() + c0 - 2, std::min(y0, y1)), QPoint(plot.left() + c1 + 2, std::max(y0, y1)));
  const QRect shown = box.intersected(plot);
  if (shown.isEmpty()) return {};
  p.save();
  p.setPen(QPen(QColor(200, 30, 30), 1.5, Qt::DashLine));
  p.setBrush(QColor(200, 30, 30, 40));
  p.drawRect(shown);
  p.restore();
  return shown;
}

// Every variant's cleanups, probes and other edits: a vertical dotted line at the edit's event
// boundary with a marker on the plot's top edge, labelled while there are few.
void paintEditMarks(QPainter& p, const QRect& plot, const TimelineDecor& d, TimelineLayout& layout) {
  // Edits in one pixel column share a marker: "cleanup, probe".
  std::vector<std::pair<EditMarkDrawn, QColor>> marks;
  for (const EditMark& m : d.edit_marks) {
    if (m.x < 0 || m.x > plot.width()) continue;
    const double x = plot.left() + std::floor(m.x) + 0.5;
    auto same = std::find_if(marks.begin(), marks.end(), [x](const auto& k) { return k.first.x == x; });
    if (same == marks.end()) {
      marks.push_back({EditMarkDrawn{x, {m.event}, m.label, {}}, m.colour});
      continue;
    }
    same->first.events.push_back(m.event);
    if (!same->first.label.split(QStringLiteral(", ")).contains(m.label))
      same->first.label += QStringLiteral(", ") + m.label;
  }
  const bool labels = marks.size() <= 8;
  p.save();
  p.setRenderHint(QPainter::Antialiasing);
  const int text_h = QFontMetrics(p.font()).height();
  int row = 0;
  for (auto& [mark, colour] : marks) {
    p.setPen(QPen(colour, 1, Qt::DotLine));
    p.drawLine(QPointF(mark.x, plot.top()), QPointF(mark.x, plot.bottom()));
    QPolygonF tri;
    tri << QPointF(mark.x - 6, plot.top()) << QPointF(mark.x + 6, plot.top()) << QPointF(mark.x, plot.top() + 9);
    p.setPen(Qt::NoPen);
    p.setBrush(colour);
    p.drawPolygon(tri);
    mark.rect = tri.boundingRect().toAlignedRect();
    if (labels) {
      // Stacked down from the top edge so that neighbours' labels do not overprint.
      const int w = labelWidth(p, mark.label);
      const int left =
          mark.x + 8 + w + 4 < plot.right() ? static_cast<int>(mark.x) + 8 : static_cast<int>(mark.x) - 8 - w - 4;
      const QRect text(left, plot.top() + 2 + (row++ % 4) * text_h, w + 4, text_h);
      p.setPen(colour);
      drawLabel(p, text, Qt::AlignLeft | Qt::AlignTop, mark.label);
      mark.rect |= text;
    } else {
      mark.label.clear();
    }
    layout.edit_marks.push_back(std::move(mark));
  }
  p.restore();
}

}  // namespace

TimelineLayout paintTimeline(QPainter& p, const QRect& plot, const TimelineFrame& f, const RecordedPlot& rec,
                             const TimelineDecor& d) {
  TimelineLayout layout;
  if (!f.raster.isNull())
    p.drawImage(plot.topLeft(), f.raster);
  else
    p.fillRect(plot, QColor(252, 252, 253));
  paintYAxis(p, plot, f.y);
  layout.x_title = paintXAxis(p, plot, f.request.x, f.request.time_axis,
                              rec.trace->series.time_us.empty() ? 0 : rec.trace->series.time_us.front());
  std::vector<std::pair<QString, QPen>> legend;
  const auto curve = [&](const std::vector<ColumnEnvelope>& env, CurveKind kind, const QString& label) {
    const QPen pen = curvePen(curveStyle(kind));
    if (!f.curves_rastered) paintCurve(p, plot, env, f.y, pen);
    legend.emplace_back(label, pen);
  };
  curve(f.reserved, CurveKind::kReserved, QStringLiteral("reserved (recorded)"));
  if (!f.allocated.empty()) {
    curve(f.allocated, CurveKind::kAllocated, QStringLiteral("allocated (model)"));
    curve(f.active, CurveKind::kActive, QStringLiteral("active (model)"));
  }
  if (!f.mapped.empty()) curve(f.mapped, CurveKind::kMapped, QStringLiteral("expandable pages mapped"));
  if (!f.variant.empty()) curve(f.variant, CurveKind::kVariant, QStringLiteral("what-if reserved: ") + d.variant_name);
  for (std::size_t i = 0; i < f.overlays.size(); ++i) {
    const QPen pen = curvePen(overlayStyle(i));
    if (!f.curves_rastered) paintCurve(p, plot, f.overlays[i], f.y, pen);
    legend.emplace_back(QStringLiteral("what-if: ") + d.overlay_names.value(static_cast<qsizetype>(i)), pen);
  }
  if (!f.bands.offsets.empty()) legend.emplace_back(bandLegendEntry(f, !rec.trace->facts.complete));
  paintAnnotations(p, plot, f, rec);
  paintOoms(p, plot, f);
  paintEditMarks(p, plot, d, layout);
  if (d.show_peak && d.climb) {
    layout.climb = paintClimb(p, plot, f, *d.climb);
    if (!layout.climb.isEmpty())
      legend.emplace_back(QStringLiteral("the rise that made the peak"), QPen(QColor(200, 30, 30), 1.5, Qt::DashLine));
  }
  if (d.show_peak) layout.peak_label = paintPeak(p, plot, f, d);
  if (d.cursor) {
    const int c = columnOfEvent(f, *d.cursor);
    if (c >= 0) {
      p.setPen(QPen(QColor(0, 120, 215), 1.5));
      p.drawLine(plot.left() + c, plot.top(), plot.left() + c, plot.bottom());
    }
  }
  if (d.selection) {
    const int a = std::min(d.selection->first, d.selection->second),
              b = std::max(d.selection->first, d.selection->second);
    p.fillRect(QRect(plot.left() + a, plot.top(), b - a, plot.height()), QColor(0, 120, 215, 50));
  }
  // Under the x axis's labels and title, outside the plot: it never covers data, the peak label
  // or the axis's title.
  const QFontMetrics fm(p.font());
  layout.legend =
      paintLegendRow(p, QRect(plot.left(), legendTop(plot, fm), plot.width(), legendStripHeight(fm)), legend);
  p.setPen(QColor(0, 0, 0, 70));
  p.setBrush(Qt::NoBrush);
  p.drawRect(plot.adjusted(0, 0, -1, -1));
  if (!d.title.isEmpty()) {
    QFont bold = p.font();
    bold.setBold(true);
    p.setFont(bold);
    p.setPen(QColor(40, 40, 40));
    drawLabel(p, QRect(plot.left(), 0, plot.width(), plot.top() - 14), Qt::AlignLeft | Qt::AlignTop, d.title);
  }
  return layout;
}

}  // namespace reservoir::gui
