// Painting a TimelineFrame: axes, bands, curves, markers, legend.
#pragma once

#include <QPainter>
#include <QRect>

#include "plot/timeline_frame.h"

namespace reservoir::gui {

struct TimelineDecor {
  std::optional<std::uint32_t> cursor;
  std::uint32_t peak_event = 0;
  std::int64_t peak_bytes = 0;
  bool show_peak = true;
  QString variant_name;
  std::optional<std::pair<int, int>> selection;  // pixel columns being selected
  QString title;
};

void paintTimeline(QPainter& p, const QRect& plot, const TimelineFrame& f, const RecordedPlot& rec,
                   const TimelineDecor& decor);

// Helpers shared with the comparison plot.
void paintYAxis(QPainter& p, const QRect& plot, const Axis& y);
void paintXAxis(QPainter& p, const QRect& plot, const Axis& x, bool time_axis, std::int64_t time_origin);
void paintCurve(QPainter& p, const QRect& plot, const std::vector<ColumnEnvelope>& env, const Axis& y, const QPen& pen);
// Text in `r` with `align`; on a raster device from a cache of laid-out labels.
void drawLabel(QPainter& p, const QRectF& r, Qt::Alignment align, const QString& text);
int labelWidth(const QPainter& p, const QString& text);
// The pen that strokes a curve of this style (vector output, legends).
QPen curvePen(const CurveStyle& style);
void paintLegend(QPainter& p, QPoint at, const std::vector<std::pair<QString, QPen>>& entries);

}  // namespace reservoir::gui
