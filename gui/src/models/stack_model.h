// One stack's frames as a table, innermost first: the function and the short `file:line`
// (the library's rule, replay::shortFramePath); the full path is the file column's tooltip.
#pragma once

#include <QAbstractTableModel>

#include <memory>

#include "app/plot_data.h"

namespace reservoir::gui {

class StackModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kFunction, kFile, kColumnCount };
  enum Roles { FrameRole = Qt::UserRole + 1 };  // the frame id (uint)

  explicit StackModel(QObject* parent = nullptr);
  // The frames of `stack` in the plot's snapshot; no plot or an invalid stack empties it.
  void setStack(std::shared_ptr<const RecordedPlot> plot, StackId stack);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  std::shared_ptr<const RecordedPlot> plot_;
  std::vector<FrameId> frames_;
};

}  // namespace reservoir::gui
