// Live memory at the cursor (or at the peak) attributed to the allocating call sites, as a
// tree (top-down from the outermost frames, or bottom-up from the allocating ones).
#pragma once

#include <QWidget>

class QComboBox;
class QLabel;
class QTreeView;
class QTimer;

namespace reservoir::gui {

class CallTreeModel;
class TraceDocument;

class CallSitesView : public QWidget {
  Q_OBJECT

 public:
  explicit CallSitesView(TraceDocument* doc, QWidget* parent = nullptr);
  void rebuild();
  [[nodiscard]] CallTreeModel* model() const { return model_; }
  void setBottomUp(bool on);
  void setAtPeak(bool on);

 signals:
  void pointPicked(const QString& point);

 private:
  TraceDocument* doc_;
  QComboBox* direction_;
  QComboBox* when_;
  QLabel* summary_;
  QTreeView* tree_;
  CallTreeModel* model_;
  QTimer* timer_;
};

}  // namespace reservoir::gui
