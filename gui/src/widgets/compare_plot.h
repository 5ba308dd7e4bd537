// The comparison's plot: two traces' reserved and allocated on the same axes, with their peaks.
// Wheel zooms, drag pans, a double click shows everything again; hovering draws a line across
// both runs and names each run's values there; a click moves both documents' cursors to the
// events under it (the cursor line).
#pragma once

#include <QPointer>
#include <QWidget>

#include <array>
#include <optional>
#include <vector>

#include "geometry/axis.h"
#include "geometry/lod.h"
#include "reservoir/replay/annotation_alignment.h"

namespace reservoir::gui {

class TraceDocument;

class ComparePlot : public QWidget {
  Q_OBJECT

 public:
  explicit ComparePlot(QWidget* parent = nullptr);
  void setDocuments(TraceDocument* a, TraceDocument* b);
  void setTimeAxis(bool on);
  // Aligns the second trace on the first at the starts of `annotation` (empty: on events or
  // time again); the rule is replay::alignOnAnnotation's.
  void setAnnotation(const QString& annotation);
  void render(QPainter& p, QSize size);
  QSize sizeHint() const override { return {900, 380}; }
  // The alignment in use (annotation mode, when both traces have the annotation), the reason
  // when they cannot be aligned, and the pixel columns the last paint gave each trace.
  [[nodiscard]] const std::optional<replay::EventAlignment>& alignment() const { return alignment_; }
  [[nodiscard]] const QString& alignmentError() const { return alignment_error_; }
  [[nodiscard]] const std::vector<ColumnRange>& lastColumns(int side) const { return columns_[side ? 1 : 0]; }

  // Zoom by `factor` (< 1: in) around pixel `x` of the plot (from its left edge).
  void zoomBy(double factor, double x);
  void resetZoom();
  [[nodiscard]] bool zoomed() const { return view_.has_value(); }
  // The domain shown over the plot's pixel columns (events, or microseconds since each
  // trace's first event).
  [[nodiscard]] Axis xAxis() const;
  [[nodiscard]] QRect plotArea() const { return plotRect(size()); }
  // The header in full, and as the last paint drew it (elided to the plot's width).
  [[nodiscard]] QString titleText() const;
  [[nodiscard]] const QString& shownTitle() const { return title_shown_; }
  [[nodiscard]] const QRect& titleRect() const { return title_rect_; }
  // Where the last paint put the two peak labels.
  [[nodiscard]] const std::array<QRect, 2>& peakLabels() const { return peak_labels_; }
  // And their words: "peak 25.33 GiB", or, zoomed away from the run's peak, "highest in view
  // 24.51 GiB (peak 25.33 GiB)" (the view's maximum is not called the peak).
  [[nodiscard]] const std::array<QString, 2>& peakTexts() const { return peak_texts_; }
  // Each run's event and values at plot column `column` (empty outside the plot).
  [[nodiscard]] QString hoverText(int column) const;
  // The plot column of the hover line (none when the mouse is away).
  [[nodiscard]] std::optional<int> hoverColumn() const { return hover_; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;
  bool event(QEvent* event) override;

 private:
  struct Series {
    std::vector<ColumnEnvelope> reserved, allocated;
    std::uint32_t peak_column = 0;
    std::int64_t peak = 0;      // the highest reserved in view
    std::int64_t run_peak = 0;  // the run's peak reserved (in view or not)
  };
  [[nodiscard]] bool ready() const;
  [[nodiscard]] QRect plotRect(QSize size) const;
  // Everything: the domain both traces cover.
  [[nodiscard]] Axis fullAxis(int width) const;
  [[nodiscard]] bool timeAxisInUse() const { return time_axis_ && !alignment_; }
  void updateAlignment();
  void paintCurves(QPainter& p, const QRect& plot, const Axis& y);
  void paintPeaks(QPainter& p, const QRect& plot, const Axis& y);
  void paintCursorLines(QPainter& p, const QRect& plot);
  void paintTitle(QPainter& p, const QRect& plot);
  static Series seriesOf(const TraceDocument& d, const std::vector<ColumnRange>& cols);
  void showHover(QPoint pos, QPoint global);
  void moveCursors(int column);
  QPointer<TraceDocument> a_, b_;
  bool time_axis_ = false;
  QString annotation_;
  std::optional<replay::EventAlignment> alignment_;
  QString alignment_error_;
  std::vector<ColumnRange> columns_[2];
  Series series_[2];
  std::optional<std::pair<double, double>> view_;  // the domain in view when zoomed
  std::optional<int> hover_;
  std::optional<QPoint> press_, drag_last_;
  QString title_shown_;
  QRect title_rect_;
  std::array<QRect, 2> peak_labels_;
  std::array<QString, 2> peak_texts_;
};

}  // namespace reservoir::gui
