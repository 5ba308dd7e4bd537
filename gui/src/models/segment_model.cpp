#include "models/segment_model.h"

#include <QBrush>
#include <QColor>

#include "app/format.h"

namespace reservoir::gui {

QColor blockKindColour(BlockKind kind) {
  switch (kind) {
    case BlockKind::kAllocated: return QColor(66, 133, 244);
    case BlockKind::kPendingFree: return QColor(171, 71, 188);
    case BlockKind::kCachedFree: return QColor(129, 199, 132);
    case BlockKind::kInactiveSplit: return QColor(255, 183, 77);
    case BlockKind::kUnmapped: return QColor(224, 224, 224);
  }
  return Qt::gray;
}

SegmentModel::SegmentModel(QObject* parent) : QAbstractItemModel(parent) {}

void SegmentModel::setState(std::shared_ptr<const AllocatorState> state, std::shared_ptr<const RecordedPlot> plot) {
  beginResetModel();
  state_ = std::move(state);
  plot_ = std::move(plot);
  endResetModel();
}

QModelIndex SegmentModel::indexOfBlock(int block) const {
  if (!state_ || block < 0) return {};
  for (std::size_t s = 0; s < state_->segments.size(); ++s) {
    const auto& seg = state_->segments[s];
    if (static_cast<std::uint32_t>(block) >= seg.first_block &&
        static_cast<std::uint32_t>(block) < seg.first_block + seg.block_count)
      return createIndex(block - static_cast<int>(seg.first_block), 0, static_cast<quintptr>(s));
  }
  return {};
}

QModelIndex SegmentModel::index(int row, int column, const QModelIndex& parent) const {
  if (!hasIndex(row, column, parent)) return {};
  if (!parent.isValid()) return createIndex(row, column, kSegmentRow);
  return createIndex(row, column, static_cast<quintptr>(parent.row()));
}

QModelIndex SegmentModel::parent(const QModelIndex& child) const {
  if (!child.isValid() || child.internalId() == kSegmentRow) return {};
  return createIndex(static_cast<int>(child.internalId()), 0, kSegmentRow);
}

int SegmentModel::rowCount(const QModelIndex& parent) const {
  if (!state_) return 0;
  if (!parent.isValid()) return static_cast<int>(state_->segments.size());
  if (parent.internalId() != kSegmentRow || parent.column() != 0) return 0;
  return static_cast<int>(state_->segments[static_cast<std::size_t>(parent.row())].block_count);
}

int SegmentModel::columnCount(const QModelIndex&) const { return kColumnCount; }

QVariant SegmentModel::segmentData(int s, int column, int role) const {
  const auto& seg = state_->segments[static_cast<std::size_t>(s)];
  if (role == SegmentRole) return s;
  if (role == BlockRole || role == KindRole) return -1;
  if (role == PinningRole) return seg.pinned;
  if (role == BytesRole) return static_cast<qulonglong>(seg.size);
  if (role == Qt::ForegroundRole && seg.pinned) return QBrush(QColor(190, 30, 30));
  if (role != Qt::DisplayRole) return {};
  switch (column) {
    case kAddress: return addressText(seg.address);
    case kSize: return sizeText(static_cast<std::int64_t>(seg.size));
    case kState:
      if (seg.unmapped_gap) return QStringLiteral("unmapped");
      return QStringLiteral("%1%2, %3 free%4")
          .arg(seg.is_large ? QStringLiteral("large") : QStringLiteral("small"),
               seg.expandable ? QStringLiteral(" expandable") : QString(),
               sizeText(static_cast<std::int64_t>(seg.free_bytes)),
               seg.pinned ? QStringLiteral(", pinned: %1 stays after empty_cache")
                                .arg(sizeText(static_cast<std::int64_t>(seg.kept_free)))
                          : QString());
    case kRequested: return sizeText(static_cast<std::int64_t>(seg.allocated)) + QStringLiteral(" live");
    case kAllocation: return QStringLiteral("%1 blocks").arg(seg.block_count);
    default: return {};
  }
}

QVariant SegmentModel::blockData(int b, int column, int role) const {
  const auto& blk = state_->blocks[static_cast<std::size_t>(b)];
  if (role == BlockRole) return b;
  if (role == KindRole) return static_cast<int>(blk.kind);
  if (role == PinningRole) return blk.pinning;
  if (role == BytesRole) return static_cast<qulonglong>(blk.size);
  if (role == Qt::DecorationRole && column == kState) return blockKindColour(blk.kind);
  if (role == Qt::ForegroundRole && blk.pinning) return QBrush(QColor(190, 30, 30));
  if (role != Qt::DisplayRole) return {};
  const bool has_alloc =
      blk.allocation != StateBlock::kNoAllocationId && plot_ && blk.allocation < plot_->trace->lifetimes.count();
  switch (column) {
    case kAddress: return addressText(blk.address);
    case kSize: return sizeText(static_cast<std::int64_t>(blk.size));
    case kState:
      return QString::fromLatin1(blockKindName(blk.kind)) + (blk.pinning ? QStringLiteral(" (pins)") : QString());
    case kRequested:
      return blk.kind == BlockKind::kAllocated || blk.kind == BlockKind::kPendingFree
                 ? sizeText(static_cast<std::int64_t>(blk.requested))
                 : QVariant();
    case kAllocation: return has_alloc ? QVariant(QStringLiteral("#%1").arg(blk.allocation)) : QVariant();
    case kFrame:
      return has_alloc && blk.kind != BlockKind::kCachedFree && blk.kind != BlockKind::kInactiveSplit
                 ? topUserFrame(plot_->trace->snapshot(), plot_->trace->lifetimes.stack(blk.allocation))
                 : QVariant();
    default: return {};
  }
}

QVariant SegmentModel::data(const QModelIndex& index, int role) const {
  if (!state_ || !index.isValid()) return {};
  if (index.internalId() == kSegmentRow) return segmentData(index.row(), index.column(), role);
  const auto& seg = state_->segments[index.internalId()];
  if (role == SegmentRole) return static_cast<int>(index.internalId());
  return blockData(static_cast<int>(seg.first_block) + index.row(), index.column(), role);
}

QVariant SegmentModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"address", "size", "state", "allocated / requested", "allocation", "allocated at"};
  return section >= 0 && section < kColumnCount ? QString::fromLatin1(names[section]) : QVariant();
}

}  // namespace reservoir::gui
