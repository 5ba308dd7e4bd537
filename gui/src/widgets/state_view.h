// The allocator state at the cursor: the segment map, the segment/block tree, and the
// selected block's stack and history.
#pragma once

#include <QWidget>

#include <memory>

#include "models/allocator_state.h"

class QTextBrowser;
class QTreeView;
class QTimer;

namespace reservoir::gui {

class SegmentMap;
class SegmentModel;
class TraceDocument;

class StateView : public QWidget {
  Q_OBJECT

 public:
  explicit StateView(TraceDocument* doc, QWidget* parent = nullptr);
  [[nodiscard]] const AllocatorState* state() const { return state_.get(); }
  [[nodiscard]] QString placeholder() const;  // what the map says while it has no state
  [[nodiscard]] SegmentModel* model() const { return model_; }
  void selectBlock(int block);
  // Rebuilds the state now (normally coalesced after cursor moves).
  void rebuild();

 signals:
  void pointPicked(const QString& point);  // a frame clicked in a stack: a what-if point
  void eventRequested(std::uint32_t event);

 private:
  void showDetails(int block);
  void onLink(const QUrl& url);
  TraceDocument* doc_;
  SegmentMap* map_;
  QTreeView* tree_;
  SegmentModel* model_;
  QTextBrowser* details_;
  QTimer* timer_;
  std::shared_ptr<const AllocatorState> state_;
};

// HTML describing allocation `a` of the trace: size, lifetime events, stack.
QString allocationHtml(const TraceDocument& doc, std::uint32_t allocation);

}  // namespace reservoir::gui
