// Live memory attributed to the allocating call sites (replay::CallTree), top-down or
// bottom-up, as a tree model.
#pragma once

#include <QAbstractItemModel>

#include <memory>
#include <vector>

#include "reservoir/replay/callgraph.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::gui {

class CallTreeModel : public QAbstractItemModel {
  Q_OBJECT

 public:
  enum Column { kSite, kBytes, kShare, kBlocks, kColumnCount };
  enum Roles {
    FrameRole = Qt::UserRole + 1,  // frame id (uint), invalid for the root
    BytesRole,                     // live bytes (qlonglong)
    NodeRole,                      // node index (uint)
  };

  explicit CallTreeModel(QObject* parent = nullptr);
  // `snapshot` must outlive the tree (the document keeps it).
  void setTree(std::shared_ptr<const replay::CallTree> tree, std::shared_ptr<const traces::Snapshot> snapshot);
  [[nodiscard]] const replay::CallTree* tree() const { return tree_.get(); }

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  [[nodiscard]] std::uint32_t nodeOf(const QModelIndex& index) const;
  std::shared_ptr<const replay::CallTree> tree_;
  std::shared_ptr<const traces::Snapshot> snapshot_;
  std::vector<std::uint32_t> row_;  // each node's row under its parent
};

}  // namespace reservoir::gui
