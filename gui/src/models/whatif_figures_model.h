// One variant's figures against the recording, as a table: reserved at each edit's point (just
// after a cleanup or a release; at a probe), the peaks, final reserved, out of memory, demands,
// the peak saving and the device the edited run had. Built from the library's WhatIfReport (no
// text is parsed); the words of the points are the library's (replay::describePoint).
#pragma once

#include <QAbstractTableModel>
#include <QString>

#include <memory>
#include <vector>

#include "reservoir/replay/whatif.h"

namespace reservoir::gui {

class WhatIfFiguresModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kFigure, kRecording, kWhatIf, kChange, kColumnCount };
  // The cell's bytes (qlonglong) where it is a size; invalid otherwise.
  enum Roles { BytesRole = Qt::UserRole + 1 };

  explicit WhatIfFiguresModel(QObject* parent = nullptr);
  // The report's figures; null empties the table.
  void setReport(std::shared_ptr<const replay::WhatIfReport> report);
  [[nodiscard]] const replay::WhatIfReport* report() const { return report_.get(); }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  struct Cell {
    QString text, tooltip;
    std::optional<std::int64_t> bytes;
  };
  struct Row {
    QString figure, tooltip;
    Cell recording, whatif, change;
    int tone = 0;  // +1 better (green), -1 worse (red), 0 neither
  };

 private:
  void addEditPoints();
  void addProbes();
  void addSizes();
  void addOutcome();
  void addDevice();
  std::shared_ptr<const replay::WhatIfReport> report_;
  std::vector<Row> rows_;
};

}  // namespace reservoir::gui
