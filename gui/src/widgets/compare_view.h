// Two traces (two ranks, or fresh vs resumed) on the same axes: reserved and allocated of
// each, over events or over time since each trace's first event, with their peaks, and a
// table of their facts side by side.
#pragma once

#include <QPointer>
#include <QWidget>

#include <optional>
#include <vector>

#include "geometry/axis.h"
#include "reservoir/replay/annotation_alignment.h"

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
  // Aligns the second trace on the first at the starts of `annotation` (empty: on events or
  // time again); the rule is replay::alignOnAnnotation's.
  void setAnnotation(const QString& annotation);
  void render(QPainter& p, QSize size);
  QSize sizeHint() const override { return {900, 380}; }
  // The alignment in use (annotation mode, when both traces have the annotation), the reason
  // when they cannot be aligned, and the pixel columns the last paint gave each trace.
  [[nodiscard]] const std::optional<replay::EventAlignment>& alignment() const { return alignment_; }
  [[nodiscard]] const QString& alignmentError() const { return alignment_error_; }
  [[nodiscard]] const std::vector<ColumnRange>& lastColumns(int side) const { return columns_[side ? 1 : 0]; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  void updateAlignment();
  QPointer<TraceDocument> a_, b_;
  bool time_axis_ = false;
  QString annotation_;
  std::optional<replay::EventAlignment> alignment_;
  QString alignment_error_;
  std::vector<ColumnRange> columns_[2];
};

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
