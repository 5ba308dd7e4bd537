// The memory timeline: reserved / allocated / active bytes over events or time, the live
// blocks as stacked bands, the peak, OOM events, annotations, the cursor and the selected
// what-if's predicted reserved curve. Wheel zooms, drag pans, shift-drag (or right-drag)
// zooms to a range, Ctrl+wheel zooms vertically, a click moves the cursor, hovering names the
// block under the mouse.
#pragma once

#include <QWidget>

#include <optional>
#include <unordered_map>

#include "plot/timeline_frame.h"
#include "widgets/timeline_paint.h"

namespace reservoir::gui {

class TraceDocument;
struct Variant;

// PageUp/PageDown in the plot and Navigate's Alt+PgUp/PgDown move the cursor this far.
inline constexpr int kPageEvents = 10000;

class TimelineView : public QWidget {
  Q_OBJECT

 public:
  explicit TimelineView(QWidget* parent = nullptr);
  void setDocument(TraceDocument* doc);

  [[nodiscard]] bool timeAxis() const { return time_axis_; }
  void setTimeAxis(bool on);
  void setShowBands(bool on);
  void zoomBy(double factor);
  // Vertical zoom (Ctrl+wheel): the y axis's top times `factor` (< 1: in), from the bottom,
  // never past the curves' own top; resetZoom() undoes it too.
  void zoomY(double factor);
  [[nodiscard]] bool yZoomed() const { return y_max_.has_value(); }
  void resetZoom();
  void zoomToEvents(std::uint32_t first, std::uint32_t end);
  void ensureCursorVisible();
  [[nodiscard]] const Axis& xAxis() const { return x_; }
  [[nodiscard]] const TimelineFrame* frame() const { return frame_ ? &*frame_ : nullptr; }
  // Renders the plot (what is on screen) into `painter`'s device at `size`.
  void render(QPainter& painter, QSize size);

  QSize sizeHint() const override { return {900, 360}; }
  // The plot's rectangle at the current size, and where the last paint put the legend and
  // the peak label (tests: the legend stays outside the plot).
  [[nodiscard]] QRect plotArea() const { return plotRect(size()); }
  [[nodiscard]] const TimelineLayout& lastLayout() const { return layout_; }
  // The x (in this widget) of event `e`'s left edge on the current axis: where the cursor and
  // the what-if edits at boundary `e` are drawn.
  [[nodiscard]] double xOfEvent(std::uint32_t e) const;
  // The plot's header line ("rank0.pickle — device 0, 4960 events  (modelling ...)").
  [[nodiscard]] QString headerText() const;

 signals:
  void eventClicked(std::uint32_t event);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  bool event(QEvent* event) override;

 private:
  [[nodiscard]] QRect plotRect(QSize size) const;
  void ensureFrame(QSize size);
  // The visible domain over pixels [0, width) of the plot.
  [[nodiscard]] Axis viewAxis(int width) const;
  [[nodiscard]] TimelineFrame makeFrame(QSize size, bool raster_curves) const;
  // The y axis's top without a vertical zoom (from the curves in view).
  [[nodiscard]] double naturalTop(QSize size) const;
  void invalidate();
  void showHover(QPoint pos, QPoint global);
  [[nodiscard]] QString hoverText(int column, double y_px) const;
  // The other finished variants drawn beside the selected one (and their names).
  std::vector<const OpCurve*> overlayCurves(QStringList* names) const;
  // The indices of the variants drawn beside the selected one, newest first.
  [[nodiscard]] std::vector<int> overlayIndices() const;
  // Every finished variant's edits as marks at their event boundaries (the boundaries are
  // resolved once per variant report).
  [[nodiscard]] std::vector<EditMark> editMarks(QSize size);
  const std::vector<std::pair<std::uint32_t, QString>>& editBoundaries(const Variant& v);

  TraceDocument* doc_ = nullptr;
  Axis x_;
  bool time_axis_ = false, bands_ = true, zoomed_ = false;
  std::optional<std::int64_t> y_max_;  // the y axis's top when zoomed vertically
  std::optional<TimelineFrame> frame_;
  QSize frame_size_;
  std::optional<QPoint> press_, drag_last_;
  bool selecting_ = false;
  int select_from_ = 0, select_to_ = 0;
  TimelineLayout layout_;
  // Per variant report: its edits' boundaries and kinds.
  std::unordered_map<const void*, std::vector<std::pair<std::uint32_t, QString>>> boundaries_;
};

}  // namespace reservoir::gui
