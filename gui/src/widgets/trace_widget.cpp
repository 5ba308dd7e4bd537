#include "widgets/trace_widget.h"

#include <algorithm>

#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
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
    : QWidget(parent), doc_(doc), split_(new QSplitter(Qt::Vertical, this)), failure_page_(new QWidget(this)),
      failure_(new QLabel(failure_page_)), open_again_(new QPushButton(tr("Open again"), failure_page_)),
      timeline_(new TimelineView(this)), tabs_(new QTabWidget(this)), state_(new StateView(doc, this)),
      events_(new EventsView(doc, this)), callsites_(new CallSitesView(doc, this)),
      whatif_(new WhatIfPanel(doc, this)) {
  timeline_->setDocument(doc);
  tabs_->addTab(state_, tr("Allocator state"));
  tabs_->addTab(events_, tr("Events"));
  tabs_->addTab(callsites_, tr("Call sites"));
  tabs_->addTab(whatif_, tr("What-if"));
  tabs_->addTab(segments_ = new SegmentTimelineView(doc, this), tr("Segment timeline"));
  failure_->setWordWrap(true);
  failure_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  failure_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  failure_->setMargin(16);
  auto* buttons = new QHBoxLayout;
  buttons->setContentsMargins(16, 0, 16, 16);
  auto* other = new QPushButton(tr("Open another file..."), failure_page_);
  open_again_->setToolTip(tr("Read %1 again, e.g. once it is fixed or has finished copying").arg(doc->path()));
  buttons->addWidget(open_again_);
  buttons->addWidget(other);
  buttons->addStretch();
  auto* page = new QVBoxLayout(failure_page_);
  page->setContentsMargins(0, 0, 0, 0);
  page->addWidget(failure_);
  page->addLayout(buttons);
  page->addStretch();
  connect(open_again_, &QPushButton::clicked, this, &TraceWidget::openAgainRequested);
  connect(other, &QPushButton::clicked, this, &TraceWidget::openOtherRequested);
  failure_page_->hide();
  split_->addWidget(failure_page_);
  split_->addWidget(timeline_);
  split_->addWidget(tabs_);
  // A taller window gives most of its extra height to the plot.
  split_->setStretchFactor(0, 3);
  split_->setStretchFactor(1, 3);
  split_->setStretchFactor(2, 2);
  connect(split_, &QSplitter::splitterMoved, this, [this] { user_split_ = true; });
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
  connect(doc_, &TraceDocument::failedToLoad, this, &TraceWidget::showFailure);
  if (doc_->failed()) showFailure(doc_->error());
  connect(tabs_, &QTabWidget::currentChanged, this, [this] {
    if (tabs_->currentWidget() == callsites_) callsites_->rebuild();
  });
}

void TraceWidget::showFailure(const QString& message) {
  failure_->setText(tr("Could not open %1:\n\n%2").arg(QFileInfo(doc_->path()).fileName(), message));
  failure_page_->show();
  timeline_->hide();
  // The message takes the timeline's place and share (on a short window the timeline's rule had
  // left this place no height at all).
  const QList<int> sizes = split_->sizes();
  const int h = split_->height();
  if (sizes.size() == 3 && h > 0) {
    const int top = std::max(sizes[0] + sizes[1],
                             std::max(failure_->heightForWidth(split_->width()) + open_again_->sizeHint().height() + 16, h / 3));
    split_->setSizes({top, 0, std::max(h - top, 0)});
  }
}

void TraceWidget::showTab(Tab tab) {
  QWidget* w[] = {state_, events_, callsites_, whatif_, segments_};
  tabs_->setCurrentWidget(w[static_cast<int>(tab)]);
}

void TraceWidget::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  const int h = split_->height();
  if (user_split_ || !isVisible() || timeline_->isHidden()) return;
  if (h >= 700) {
    if (halved_) split_->setSizes(tall_sizes_);  // grown again: the shares it had when last tall
    halved_ = false;
    tall_sizes_ = split_->sizes();
    return;
  }
  halved_ = true;
  split_->setSizes({0, h / 2, h - h / 2});
}

void TraceWidget::emphasizeTimeline(bool on) {
  const int h = std::max(split_->height(), 600);
  const int top = on ? h * 3 / 4 : h * 2 / 5;
  split_->setSizes({failure_page_->isHidden() ? 0 : top, timeline_->isHidden() ? 0 : top, h - top});
}

}  // namespace reservoir::gui
