// The details of one event, beside the Events table: its action, size (PyTorch's units and the
// bytes), stream, address and time, and its whole stack (StackModel: short `file:line`, the
// full path on hover).
#pragma once

#include <QWidget>

#include <cstdint>
#include <memory>
#include <optional>

#include "app/plot_data.h"

class QLabel;
class QTableView;

namespace reservoir::gui {

class StackModel;

class EventDetails : public QWidget {
  Q_OBJECT

 public:
  enum class Field { kEvent, kAction, kSize, kStream, kAddress, kTime, kCount };
  explicit EventDetails(QWidget* parent = nullptr);
  // The event's details; no plot or no event empties the pane.
  void setEvent(std::shared_ptr<const RecordedPlot> plot, std::optional<std::uint32_t> event);
  [[nodiscard]] QString fieldText(Field f) const;
  [[nodiscard]] QLabel* fieldLabel(Field f) const;
  [[nodiscard]] StackModel* stack() const { return stack_; }
  [[nodiscard]] QTableView* stackView() const { return stack_view_; }

 private:
  void setField(Field f, const QString& text);
  QLabel* fields_[static_cast<int>(Field::kCount)] = {};
  StackModel* stack_;
  QTableView* stack_view_;
};

}  // namespace reservoir::gui
