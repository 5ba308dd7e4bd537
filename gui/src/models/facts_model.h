// Trace facts and allocator settings as a table, grouped: a fact's name, then its value for
// each document (one column for a trace's page; one per trace, side by side, in Compare).
#pragma once

#include <QAbstractTableModel>
#include <QStringList>

#include <vector>

namespace reservoir::traces {
struct Snapshot;
}
namespace reservoir::replay {
struct PeakOrigin;
struct ConformanceReport;
}

namespace reservoir::gui {

class TraceDocument;

// Where a peak came from (replay::peakOrigin) in words: the event that set it and the rise that
// made it, each with its top user frame; the HTML form adds both stacks (the peak marker's tooltip).
QString peakOriginText(const traces::Snapshot& snap, const replay::PeakOrigin& origin);
QString peakOriginHtml(const traces::Snapshot& snap, const replay::PeakOrigin& origin);

// What the conformance replay reproduced, in words ("every event; but the recorded statistics
// differ: peak of active small-pool blocks: recorded 247, model 250"); `raw`, when given and
// statistics differ, gets them under their memory_stats() keys (the row's tooltip).
QString conformanceText(const replay::ConformanceReport& c, QString* raw = nullptr);

class FactsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Roles { GroupRole = Qt::UserRole + 1 };
  explicit FactsModel(QObject* parent = nullptr);
  void setDocument(TraceDocument* doc);  // refreshes on the document's stages
  void setDocuments(const std::vector<TraceDocument*>& docs);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  struct Row {
    QString group, name, value;
    QString tooltip;  // more than the value (e.g. the raw memory_stats() keys), or empty
  };
  // A fact and its value in each document (empty where a document has no such fact).
  struct Merged {
    QString group, name;
    int occurrence = 0;  // the n-th row of this group and name in a document (anomalies repeat)
    std::vector<QString> values, tooltips;
  };
  void rebuild();
  std::vector<TraceDocument*> docs_;
  std::vector<Merged> rows_;
};

}  // namespace reservoir::gui
