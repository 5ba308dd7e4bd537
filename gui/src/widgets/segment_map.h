// The allocator-state map: every segment at the cursor drawn on a wrapping ribbon at a
// fixed scale, blocks coloured by state, pinned segments and their live blocks outlined. Click selects a block.
#pragma once

#include <QWidget>

#include <memory>

#include "geometry/segment_layout.h"
#include "models/allocator_state.h"

namespace reservoir::gui {

class SegmentMap : public QWidget {
  Q_OBJECT

 public:
  explicit SegmentMap(QWidget* parent = nullptr);
  // `pin_stack`: the typical pinning stack in words (empty when nothing pins).
  void setState(std::shared_ptr<const AllocatorState> state, double scale_bytes, QString pin_stack = {});
  // The headline: what an empty_cache at the event returns and what stays pinned (the cache rule).
  [[nodiscard]] QString headline() const;
  // Its height at this width: one line, or two where one does not hold it (it is never cut short).
  [[nodiscard]] int headlineHeight() const;
  void setSelectedBlock(int block);
  // What the map says while it has no state ("appears when the model is ready" by default).
  void setPlaceholder(QString text);
  [[nodiscard]] QString placeholder() const;
  [[nodiscard]] int blockAt(QPoint pos) const;
  QSize sizeHint() const override { return {700, 300}; }

 signals:
  void blockClicked(int block);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;

 private:
  [[nodiscard]] QRect ribbonRect() const;
  [[nodiscard]] QFont headlineFont() const;
  [[nodiscard]] SegmentLayout layout() const;
  [[nodiscard]] int rowHeight() const { return 22; }
  [[nodiscard]] int rowPitch() const { return 28; }
  void paintLegend(QPainter& p) const;
  void paintPinnedOutlines(QPainter& p, const SegmentLayout& l) const;
  std::shared_ptr<const AllocatorState> state_;
  double scale_bytes_ = 1;
  int selected_ = -1;
  QString pin_stack_;
  QString placeholder_;
};

}  // namespace reservoir::gui
