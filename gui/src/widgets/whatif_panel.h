// The what-if panel: edits (cleanup, release, probe, demand, reset-peaks at a point, picked
// from an event or a stack frame), the edited run's device (capacity, overhead, memory
// fraction, allocator settings) make a variant; variants run on worker threads; the table
// compares them; the report pane renders the selected one's structured results: the library's
// verdict, its figures against the recording, and the stack where its peak (or its out of
// memory) is reached.
#pragma once

#include <QWidget>

#include "app/trace_document.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTableView;

namespace reservoir::gui {

class StackModel;
class VariantModel;
class WhatIfFiguresModel;

class WhatIfPanel : public QWidget {
  Q_OBJECT

 public:
  explicit WhatIfPanel(TraceDocument* doc, QWidget* parent = nullptr);
  // Fills the point field (from a click elsewhere).
  void pickPoint(const QString& point);
  // Runs a variant from edit texts ("cleanup after:...") and settings, on the Device group's device.
  void runVariant(const QStringList& edits, const QString& settings);
  [[nodiscard]] VariantModel* model() const { return model_; }
  [[nodiscard]] QTableView* variantsView() const { return table_; }
  // The selected variant's report as the command line prints it (what "Copy as text" copies).
  [[nodiscard]] QString reportText() const;
  void copyReportText() const;
  // The edits box (one edit per line) and Run variant.
  void setEditsText(const QString& text);
  [[nodiscard]] QString editsText() const;
  void runPending();
  [[nodiscard]] QLineEdit* pointField() const { return point_; }
  // The report pane.
  [[nodiscard]] QLabel* verdictLabel() const { return verdict_; }
  [[nodiscard]] QTableView* figuresView() const { return figures_view_; }
  [[nodiscard]] WhatIfFiguresModel* figures() const { return figures_; }
  [[nodiscard]] QLabel* stackLabel() const { return stack_label_; }
  [[nodiscard]] StackModel* stack() const { return stack_; }
  // The Device group: its fields as the next variant takes them, and the library's error on them.
  [[nodiscard]] QComboBox* capacityBox() const { return capacity_; }
  [[nodiscard]] QLineEdit* overheadField() const { return overhead_; }
  [[nodiscard]] QCheckBox* fractionCheck() const { return fraction_on_; }
  [[nodiscard]] QDoubleSpinBox* fractionBox() const { return fraction_; }
  [[nodiscard]] QLineEdit* settingsField() const { return settings_; }
  [[nodiscard]] QLabel* deviceError() const { return device_error_; }
  [[nodiscard]] QPushButton* sweepButton() const { return sweep_; }
  [[nodiscard]] VariantDevice device() const;

 private:
  QLayout* buildEditForm();
  QGroupBox* buildDeviceGroup();
  QWidget* buildReportPane();
  void connectDocument();
  void addEdit();
  void startSweep();
  [[nodiscard]] QString deviceWords() const;
  void showSelected();
  void showReport(const Variant& v);
  void restoreInputs(const Variant& v);
  void checkDevice();
  TraceDocument* doc_;
  QComboBox* kind_;
  QLineEdit* point_;
  QPlainTextEdit* edits_;
  QLineEdit* settings_;
  QComboBox* capacity_;
  QLineEdit* overhead_;
  QCheckBox* fraction_on_;
  QDoubleSpinBox* fraction_;
  QLabel* device_error_;
  QPushButton* sweep_;
  VariantModel* model_;
  QTableView* table_;
  QLabel* verdict_;
  WhatIfFiguresModel* figures_;
  QTableView* figures_view_;
  QLabel* stack_label_;
  StackModel* stack_;
  QPushButton* copy_;
};

}  // namespace reservoir::gui
