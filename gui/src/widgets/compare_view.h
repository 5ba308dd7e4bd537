// Two traces (two ranks, or fresh vs resumed) on the same axes: reserved and allocated of
// each, over events or over time since each trace's first event, with their peaks, and a
// table of their facts side by side.
#pragma once

#include <QPointer>
#include <QWidget>

#include <optional>
#include <vector>

#include "widgets/compare_plot.h"

class QComboBox;
class QTableWidget;

namespace reservoir::gui {

class TraceDocument;

class CompareView : public QWidget {
  Q_OBJECT

 public:
  explicit CompareView(QWidget* parent = nullptr);
  void setDocuments(const std::vector<TraceDocument*>& docs);
  void choose(int a, int b);
  // Aligns on the starts of an annotation (as if picked in the bar); empty: on events.
  void alignOnAnnotation(const QString& annotation);
  [[nodiscard]] ComparePlot* plot() const { return plot_; }

 private:
  void refresh();
  void applyAxis();
  // The annotations both traces start at least twice (step numbers folded).
  void fillAnnotations(TraceDocument* a, TraceDocument* b);
  std::vector<QPointer<TraceDocument>> docs_;
  QComboBox* a_;
  QComboBox* b_;
  QComboBox* axis_;
  QComboBox* annotation_;
  ComparePlot* plot_;
  QTableWidget* table_;
};

}  // namespace reservoir::gui
