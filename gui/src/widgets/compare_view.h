// Two traces (two ranks, or fresh vs resumed) on the same axes: reserved and allocated of
// each, over events or over time since each trace's first event, with their peaks, and a
// table of their facts side by side.
#pragma once

#include <QPointer>
#include <QWidget>

#include <vector>

#include "geometry/axis.h"

class QComboBox;
class QTableWidget;

namespace reservoir::gui {

class TraceDocument;

class ComparePlot : public QWidget {
  Q_OBJECT

 public:
  explicit ComparePlot(QWidget* parent = nullptr);
  void setDocuments(TraceDocument* a, TraceDocument* b);
  void setTimeAxis(bool on);
  void render(QPainter& p, QSize size);
  QSize sizeHint() const override { return {900, 380}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  QPointer<TraceDocument> a_, b_;
  bool time_axis_ = false;
};

class CompareView : public QWidget {
  Q_OBJECT

 public:
  explicit CompareView(QWidget* parent = nullptr);
  void setDocuments(const std::vector<TraceDocument*>& docs);
  void choose(int a, int b);
  [[nodiscard]] ComparePlot* plot() const { return plot_; }

 private:
  void refresh();
  std::vector<QPointer<TraceDocument>> docs_;
  QComboBox* a_;
  QComboBox* b_;
  QComboBox* axis_;
  ComparePlot* plot_;
  QTableWidget* table_;
};

}  // namespace reservoir::gui
