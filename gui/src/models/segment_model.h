// The allocator state at the cursor as a tree: segments, and under each its blocks.
#pragma once

#include <QAbstractItemModel>

#include <memory>

#include "app/plot_data.h"
#include "models/allocator_state.h"

namespace reservoir::gui {

class SegmentModel : public QAbstractItemModel {
  Q_OBJECT

 public:
  enum Column { kAddress, kSize, kState, kRequested, kAllocation, kFrame, kColumnCount };
  enum Roles {
    SegmentRole = Qt::UserRole + 1,  // segment index (int)
    BlockRole,                       // block index in AllocatorState::blocks, -1 for a segment row
    KindRole,                        // BlockKind (int), -1 for a segment row
    PinningRole,                     // bool
    BytesRole,                       // size (qulonglong)
  };

  explicit SegmentModel(QObject* parent = nullptr);
  void setState(std::shared_ptr<const AllocatorState> state, std::shared_ptr<const RecordedPlot> plot);
  [[nodiscard]] const AllocatorState* state() const { return state_.get(); }
  [[nodiscard]] QModelIndex indexOfBlock(int block) const;

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  static constexpr quintptr kSegmentRow = ~quintptr{0};
  QVariant segmentData(int s, int column, int role) const;
  QVariant blockData(int b, int column, int role) const;
  std::shared_ptr<const AllocatorState> state_;
  std::shared_ptr<const RecordedPlot> plot_;
};

// Colours of the block kinds (shared by the map and the legend).
QColor blockKindColour(BlockKind kind);

}  // namespace reservoir::gui
