// The segment timeline: every reserved range (cudaMalloc'd segments, and the pages mapped in
// expandable segments) over events as a horizontal band, stacked by address order, with the
// blocks allocated in it drawn inside in their stack's colour. Wheel zooms, drag pans, a double
// click shows everything, a click moves the cursor; hovering names the segment (size, stream,
// pool) and the allocation under the mouse (size, stack top). The data is the library's
// (replay::segmentHistory); this only draws it.
#pragma once

#include <QPointer>
#include <QWidget>

#include <optional>
#include <vector>

#include "geometry/address_lanes.h"
#include "geometry/axis.h"
#include "reservoir/replay/segment_history.h"

namespace reservoir::gui {

class TraceDocument;

class SegmentTimelineView : public QWidget {
  Q_OBJECT

 public:
  explicit SegmentTimelineView(TraceDocument* doc, QWidget* parent = nullptr);
  QSize sizeHint() const override { return {900, 360}; }

  // The history drawn (built at the first paint after the trace is loaded; none before, or
  // when it failed: why).
  [[nodiscard]] const replay::SegmentHistory* history() const { return history_ ? &*history_ : nullptr; }
  [[nodiscard]] const QString& error() const { return error_; }
  [[nodiscard]] const AddressLanes& lanes() const { return lanes_; }
  [[nodiscard]] QRect plotArea() const;
  // The events in view over the plot's pixel columns (from its left edge).
  [[nodiscard]] const Axis& xAxis() const { return x_; }
  void zoomBy(double factor, double x);
  void resetZoom();
  // Where (event, address) is drawn in this widget; none for an address in no lane.
  [[nodiscard]] std::optional<QPointF> pointOf(std::uint32_t event, std::uint64_t addr) const;
  // What hovering at `pos` (in this widget) says: the segment and the block there.
  [[nodiscard]] QString hoverText(QPoint pos) const;
  // The spans the last paint drew (tests: culling keeps what is in view).
  [[nodiscard]] std::size_t lastDrawnSegments() const { return drawn_segments_; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;

 private:
  void rebuild();
  [[nodiscard]] Axis yAxis() const;
  [[nodiscard]] Axis fullX() const;
  // The event and address under `pos`; false outside the plot or between lanes.
  bool hit(QPoint pos, std::uint32_t& event, std::uint64_t& addr) const;
  void paintSpans(QPainter& p, const QRect& plot);
  void paintBlocks(QPainter& p, const QRect& plot);
  // The stacked position of block `i` (from its segment's, without a lane search); none outside.
  [[nodiscard]] std::optional<std::uint64_t> blockPosition(std::size_t i) const;
  void paintCursor(QPainter& p, const QRect& plot);
  [[nodiscard]] QString segmentText(std::uint32_t s) const;
  [[nodiscard]] QString blockText(std::uint32_t b) const;

  QPointer<TraceDocument> doc_;
  std::optional<replay::SegmentHistory> history_;
  QString error_;
  bool stale_ = false;  // loaded since the history was built
  AddressLanes lanes_;
  Axis x_;
  std::optional<QPoint> press_, drag_last_;
  std::size_t drawn_segments_ = 0;
  // For culling without visiting every block: the latest end of each run of kBlockChunk blocks
  // (blocks are in the order they began), and each segment's stacked position.
  static constexpr std::size_t kBlockChunk = 1024;
  std::vector<std::uint32_t> chunk_end_;
  std::vector<std::optional<std::uint64_t>> segment_pos_;
};

}  // namespace reservoir::gui
