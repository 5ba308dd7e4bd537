// Painting a TimelineFrame: axes, bands, curves, markers, legend.
#pragma once

#include <QPainter>
#include <QRect>
#include <QStringList>

#include "plot/timeline_frame.h"

namespace reservoir::gui {

// A what-if edit at an event boundary, marked on the plot: `x` is the boundary's pixel from the
// plot's left edge (the timeline's x for `event`, the first event after the edit).
struct EditMark {
  std::uint32_t event = 0;
  double x = 0;
  QString label;  // "cleanup", "probe", "2: cleanup" (the variant's row) with several variants
  QColor colour;
};

// The climb that made the peak (replay::PeakClimb): from its first to its last event, from the
// reserved bytes before it to the part of its rise still held at the peak.
struct ClimbMark {
  std::uint32_t first_event = 0, last_event = 0;
  std::int64_t from = 0, to = 0;
};

struct TimelineDecor {
  std::optional<std::uint32_t> cursor;
  std::uint32_t peak_event = 0;
  std::int64_t peak_bytes = 0;
  bool show_peak = true;
  std::optional<ClimbMark> climb;  // drawn with the peak marker
  QString variant_name;
  QStringList overlay_names;                     // parallel to TimelineFrame::overlays
  std::optional<std::pair<int, int>> selection;  // pixel columns being selected
  QString title;
  // Every finished variant's edits (cleanups, probes ...), marked on the plot.
  std::vector<EditMark> edit_marks;
};

// An edit marker as painted: edits whose boundaries fall in one pixel column share it.
struct EditMarkDrawn {
  double x = 0;                       // in the widget, the marker's vertical line
  std::vector<std::uint32_t> events;  // the boundaries it marks
  QString label;                      // empty when there were too many markers to label
  QRect rect;                         // the marker and its label
};

// Where the painter put what the tests check: the legend (in a strip under the x axis,
// outside the plot), the x axis's title (above the legend) and the peak label (inside it).
struct TimelineLayout {
  QRect legend;
  QRect x_title;
  QRect peak_label;
  QRect climb;  // the climb's bracket, empty when none is drawn
  std::vector<EditMarkDrawn> edit_marks;
};

// A legend entry's swatch is this wide (a line, or a filled box for a pen of Qt::NoPen whose
// brush may be a texture laid from the box's corner).
inline constexpr int kLegendSwatchWidth = 20;
// The legend strip under the plot: room for this many lines of entries.
inline constexpr int kLegendLines = 2;
int legendStripHeight(const QFontMetrics& fm);
// The legend strip's top under `plot` (below the x axis's labels and title), and the room a
// plot leaves under itself for those.
int legendTop(const QRect& plot, const QFontMetrics& fm);
int plotBottomMargin(const QFontMetrics& fm);

TimelineLayout paintTimeline(QPainter& p, const QRect& plot, const TimelineFrame& f, const RecordedPlot& rec,
                             const TimelineDecor& decor);

// Helpers shared with the comparison plot.
void paintYAxis(QPainter& p, const QRect& plot, const Axis& y);
// Returns where the axis's title ("event", "time since the first event") was written.
QRect paintXAxis(QPainter& p, const QRect& plot, const Axis& x, bool time_axis, std::int64_t time_origin);
void paintCurve(QPainter& p, const QRect& plot, const std::vector<ColumnEnvelope>& env, const Axis& y, const QPen& pen);
// Text in `r` with `align`; on a raster device from a cache of laid-out labels.
void drawLabel(QPainter& p, const QRectF& r, Qt::Alignment align, const QString& text);
int labelWidth(const QPainter& p, const QString& text);
// The pen that strokes a curve of this style (vector output, legends).
QPen curvePen(const CurveStyle& style);
void paintLegend(QPainter& p, QPoint at, const std::vector<std::pair<QString, QPen>>& entries);
// The entries side by side in `area`, wrapping to a new line when one does not fit (entries
// past the area's last line are left out); returns the rectangle painted.
QRect paintLegendRow(QPainter& p, const QRect& area, const std::vector<std::pair<QString, QPen>>& entries);

}  // namespace reservoir::gui
