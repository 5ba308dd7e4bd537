// The what-if panel: edits (cleanup, release, probe, demand, reset-peaks at a point, picked
// from an event or a stack frame) and settings make a variant; variants run on worker
// threads; the table compares them and the report is the CLI's.
#pragma once

#include <QWidget>

class QComboBox;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTableView;

namespace reservoir::gui {

class TraceDocument;
class VariantModel;

class WhatIfPanel : public QWidget {
  Q_OBJECT

 public:
  explicit WhatIfPanel(TraceDocument* doc, QWidget* parent = nullptr);
  // Fills the point field (from a click elsewhere).
  void pickPoint(const QString& point);
  // Runs a variant from edit texts ("cleanup after:...") and settings.
  void runVariant(const QStringList& edits, const QString& settings);
  [[nodiscard]] VariantModel* model() const { return model_; }
  [[nodiscard]] QString reportText() const;
  // The edits box (one edit per line) and Run variant.
  void setEditsText(const QString& text);
  [[nodiscard]] QString editsText() const;
  void runPending();
  [[nodiscard]] QPlainTextEdit* reportView() const { return report_; }
  [[nodiscard]] QLineEdit* pointField() const { return point_; }

 private:
  void addEdit();
  void startSweep();
  void showSelected();
  TraceDocument* doc_;
  QComboBox* kind_;
  QLineEdit* point_;
  QPlainTextEdit* edits_;
  QLineEdit* settings_;
  QPushButton* sweep_;
  QTableView* table_;
  VariantModel* model_;
  QPlainTextEdit* report_;
};

}  // namespace reservoir::gui
