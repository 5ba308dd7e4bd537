// The trace as a virtual table (millions of rows): rows are computed when asked for.
#pragma once

#include <QAbstractTableModel>

#include <memory>

#include "app/plot_data.h"

namespace reservoir::gui {

class EventTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kIndex, kTime, kAction, kAddress, kSize, kStream, kAllocation, kReserved, kFrame, kColumnCount };
  enum Roles {
    EventRole = Qt::UserRole + 1,  // the event index (uint)
    StackRole,                     // the event's stack id (uint)
    SortValueRole,                 // a number for the column
  };

  explicit EventTableModel(QObject* parent = nullptr);
  void setTrace(std::shared_ptr<const RecordedPlot> plot);
  [[nodiscard]] const RecordedPlot* plot() const { return plot_.get(); }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  QVariant display(std::uint32_t event, int column) const;
  std::shared_ptr<const RecordedPlot> plot_;
};

}  // namespace reservoir::gui
