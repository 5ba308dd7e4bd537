// The what-if variants of a trace as a table: peak reserved and allocated, savings, OOM.
#pragma once

#include <QAbstractTableModel>

namespace reservoir::gui {

class TraceDocument;

class VariantModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kName, kPeakReserved, kPeakAllocated, kSaving, kAtProbe, kFinalReserved, kOom, kColumnCount };
  enum Roles { VariantRole = Qt::UserRole + 1, SavingRole };

  explicit VariantModel(TraceDocument* document, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  void refresh();
  TraceDocument* doc_;
  int rows_ = 0;
};

}  // namespace reservoir::gui
