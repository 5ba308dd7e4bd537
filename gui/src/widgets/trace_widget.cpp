#include "widgets/trace_widget.h"

#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>

#include "app/trace_document.h"
#include "widgets/callsites_view.h"
#include "widgets/events_view.h"
#include "widgets/segment_timeline.h"
#include "widgets/state_view.h"
#include "widgets/timeline_view.h"
#include "widgets/whatif_panel.h"

namespace reservoir::gui {

TraceWidget::TraceWidget(TraceDocument* doc, QWidget* parent)
    : QWidget(parent), doc_(doc), split_(new QSplitter(Qt::Vertical, this)), timeline_(new TimelineView(this)),
      tabs_(new QTabWidget(this)), state_(new StateView(doc, this)), events_(new EventsView(doc, this)),
      callsites_(new CallSitesView(doc, this)), whatif_(new WhatIfPanel(doc, this)) {
  timeline_->setDocument(doc);
  tabs_->addTab(state_, tr("Allocator state"));
  tabs_->addTab(events_, tr("Events"));
  tabs_->addTab(callsites_, tr("Call sites"));
  tabs_->addTab(whatif_, tr("What-if"));
  tabs_->addTab(segments_ = new SegmentTimelineView(doc, this), tr("Segment timeline"));
  split_->addWidget(timeline_);
  split_->addWidget(tabs_);
  // A taller window gives most of its extra height to the plot.
  split_->setStretchFactor(0, 3);
  split_->setStretchFactor(1, 2);
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->addWidget(split_);
  auto pick = [this](const QString& point) {
    whatif_->pickPoint(point);
    tabs_->setCurrentWidget(whatif_);
  };
  connect(state_, &StateView::pointPicked, this, pick);
  connect(events_, &EventsView::pointPicked, this, pick);
  connect(callsites_, &CallSitesView::pointPicked, this, pick);
  connect(state_, &StateView::eventRequested, timeline_, [this] { timeline_->ensureCursorVisible(); });
  connect(doc_, &TraceDocument::cursorChanged, timeline_, [this] { timeline_->ensureCursorVisible(); });
  connect(tabs_, &QTabWidget::currentChanged, this, [this] {
    if (tabs_->currentWidget() == callsites_) callsites_->rebuild();
  });
}

void TraceWidget::showTab(Tab tab) {
  QWidget* w[] = {state_, events_, callsites_, whatif_, segments_};
  tabs_->setCurrentWidget(w[static_cast<int>(tab)]);
}

void TraceWidget::emphasizeTimeline(bool on) {
  const int h = std::max(split_->height(), 600);
  split_->setSizes(on ? QList<int>{h * 3 / 4, h / 4} : QList<int>{h * 2 / 5, h * 3 / 5});
}

}  // namespace reservoir::gui
