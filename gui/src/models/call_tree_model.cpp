#include "models/call_tree_model.h"

#include "app/format.h"

namespace reservoir::gui {

CallTreeModel::CallTreeModel(QObject* parent) : QAbstractItemModel(parent) {}

void CallTreeModel::setTree(std::shared_ptr<const replay::CallTree> tree,
                            std::shared_ptr<const traces::Snapshot> snapshot) {
  beginResetModel();
  tree_ = std::move(tree);
  snapshot_ = std::move(snapshot);
  row_.assign(tree_ ? tree_->nodes.size() : 0, 0);
  if (tree_)
    for (const auto& n : tree_->nodes)
      for (std::size_t i = 0; i < n.children.size(); ++i) row_[n.children[i]] = static_cast<std::uint32_t>(i);
  endResetModel();
}

// The root (node 0) is the invisible root: top-level rows are its children.
std::uint32_t CallTreeModel::nodeOf(const QModelIndex& index) const {
  return index.isValid() ? static_cast<std::uint32_t>(index.internalId()) : 0u;
}

QModelIndex CallTreeModel::index(int row, int column, const QModelIndex& parent) const {
  if (!tree_ || tree_->nodes.empty() || !hasIndex(row, column, parent)) return {};
  const auto& p = tree_->nodes[nodeOf(parent)];
  return createIndex(row, column, static_cast<quintptr>(p.children[static_cast<std::size_t>(row)]));
}

QModelIndex CallTreeModel::parent(const QModelIndex& child) const {
  if (!child.isValid() || !tree_) return {};
  const std::uint32_t p = tree_->nodes[nodeOf(child)].parent;
  if (p == 0) return {};
  return createIndex(static_cast<int>(row_[p]), 0, static_cast<quintptr>(p));
}

int CallTreeModel::rowCount(const QModelIndex& parent) const {
  if (!tree_ || tree_->nodes.empty() || parent.column() > 0) return 0;
  return static_cast<int>(tree_->nodes[nodeOf(parent)].children.size());
}

int CallTreeModel::columnCount(const QModelIndex&) const { return kColumnCount; }

QVariant CallTreeModel::data(const QModelIndex& index, int role) const {
  if (!tree_ || !index.isValid()) return {};
  const auto& n = tree_->nodes[nodeOf(index)];
  switch (role) {
    case FrameRole: return n.frame.value();
    case BytesRole: return static_cast<qlonglong>(n.bytes);
    case NodeRole: return nodeOf(index);
    case Qt::TextAlignmentRole:
      return index.column() == kSite ? QVariant() : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
    case Qt::ToolTipRole: return index.column() == kSite ? frameText(*snapshot_, n.frame) : QVariant();
    case Qt::DisplayRole: break;
    default: return {};
  }
  switch (index.column()) {
    case kSite: return shortFrameText(*snapshot_, n.frame);
    case kBytes: return sizeText(n.bytes);
    case kShare: {
      const auto total = tree_->total();
      return total > 0 ? QString::number(100.0 * static_cast<double>(n.bytes) / static_cast<double>(total), 'f', 1) +
                             QLatin1Char('%')
                       : QString();
    }
    case kBlocks: return n.blocks;
    default: return {};
  }
}

QVariant CallTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"call site", "live bytes", "share", "blocks"};
  return section >= 0 && section < kColumnCount ? QString::fromLatin1(names[section]) : QVariant();
}

}  // namespace reservoir::gui
