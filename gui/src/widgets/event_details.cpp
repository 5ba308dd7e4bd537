#include "widgets/event_details.h"

#include <QFormLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

#include "app/format.h"
#include "models/stack_model.h"

namespace reservoir::gui {

namespace {

bool hasSize(traces::Action a) { return a != traces::Action::kSnapshot && a != traces::Action::kUserDefined; }

}  // namespace

EventDetails::EventDetails(QWidget* parent)
    : QWidget(parent), stack_(new StackModel(this)), stack_view_(new QTableView(this)) {
  auto* form = new QFormLayout;
  form->setContentsMargins(4, 0, 4, 0);
  const QString names[] = {tr("event"), tr("action"), tr("size"), tr("stream"), tr("address"), tr("time")};
  for (int k = 0; k < static_cast<int>(Field::kCount); ++k) {
    auto* value = fields_[k] = new QLabel(this);
    value->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Long values never widen the pane (and so never move the table beside it).
    value->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    form->addRow(names[k], value);
  }
  stack_view_->setModel(stack_);
  stack_view_->verticalHeader()->hide();
  stack_view_->verticalHeader()->setDefaultSectionSize(20);
  stack_view_->horizontalHeader()->setStretchLastSection(true);
  stack_view_->setColumnWidth(StackModel::kFunction, 160);
  stack_view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  stack_view_->setWordWrap(false);
  // Both ends stay: a frame's file:line keeps its line number, a long name its start and end
  // (the tooltip has them whole).
  stack_view_->setTextElideMode(Qt::ElideMiddle);
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->addLayout(form);
  lay->addWidget(stack_view_, 1);
  setMinimumWidth(220);
}

void EventDetails::setField(Field f, const QString& text) {
  QLabel* l = fields_[static_cast<int>(f)];
  l->setText(text);
  l->setToolTip(text);
}

void EventDetails::setEvent(std::shared_ptr<const RecordedPlot> plot, std::optional<std::uint32_t> event) {
  if (!plot || !event || *event >= plot->events()) {
    for (int k = 0; k < static_cast<int>(Field::kCount); ++k) setField(static_cast<Field>(k), {});
    setField(Field::kEvent, tr("none highlighted"));
    stack_->setStack(nullptr, StackId{});
    return;
  }
  const auto& t = *plot->trace;
  const auto& ev = t.deviceTrace().events[*event];
  setField(Field::kEvent, QString::number(*event));
  setField(Field::kAction, QString::fromUtf8(traces::actionName(ev.action).data()));
  setField(Field::kSize, hasSize(ev.action) ? exactSizeText(static_cast<std::int64_t>(ev.size)) : QString());
  setField(Field::kStream, QString::number(t.snapshot().stream(ev)));
  setField(Field::kAddress, ev.action == traces::Action::kOom
                                ? tr("%1 free on the device").arg(exactSizeText(static_cast<std::int64_t>(ev.addr)))
                                : addressText(ev.addr));
  setField(Field::kTime,
           tr("%1 after the first event").arg(timeText(t.deviceTrace().timeOf(*event) - t.facts.first_time_us)));
  stack_->setStack(std::move(plot), ev.stack);
}

QString EventDetails::fieldText(Field f) const { return fields_[static_cast<int>(f)]->text(); }

QLabel* EventDetails::fieldLabel(Field f) const { return fields_[static_cast<int>(f)]; }

}  // namespace reservoir::gui
