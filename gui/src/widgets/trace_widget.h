// One trace's page: the memory timeline above, and below it the allocator state, events,
// call sites and what-if tabs, all following the document's cursor.
#pragma once

#include <QWidget>

class QLabel;
class QPushButton;
class QSplitter;
class QTabWidget;

namespace reservoir::gui {

class CallSitesView;
class EventsView;
class SegmentTimelineView;
class StateView;
class TimelineView;
class TraceDocument;
class WhatIfPanel;

class TraceWidget : public QWidget {
  Q_OBJECT

 public:
  enum class Tab { kState, kEvents, kCallSites, kWhatIf, kSegments };
  explicit TraceWidget(TraceDocument* doc, QWidget* parent = nullptr);

  [[nodiscard]] TraceDocument* document() const { return doc_; }
  [[nodiscard]] TimelineView* timeline() const { return timeline_; }
  [[nodiscard]] QTabWidget* tabs() const { return tabs_; }
  [[nodiscard]] StateView* state() const { return state_; }
  [[nodiscard]] EventsView* events() const { return events_; }
  [[nodiscard]] CallSitesView* callSites() const { return callsites_; }
  [[nodiscard]] WhatIfPanel* whatIf() const { return whatif_; }
  // A trace that could not be opened: the reader's message, wrapped and selectable, in the
  // timeline's place (hidden while the trace opens or after it opened).
  [[nodiscard]] QLabel* failureLabel() const { return failure_; }
  // Under the message: read the same file again (fixed, or finished downloading) or pick another.
  [[nodiscard]] QPushButton* openAgainButton() const { return open_again_; }
  [[nodiscard]] SegmentTimelineView* segmentTimeline() const { return segments_; }
  void showTab(Tab tab);
  // Gives the timeline most of the height (true) or shares it with the tabs.
  void emphasizeTimeline(bool on);

 signals:
  void openAgainRequested();
  void openOtherRequested();

 protected:
  // On a short window (a laptop's 720 px) the tabs get half the height, not two fifths, until
  // the user moves the splitter: the what-if report and the block list stay readable.
  void resizeEvent(QResizeEvent* event) override;

 private:
  void showFailure(const QString& message);
  bool user_split_ = false;
  bool halved_ = false;
  QList<int> tall_sizes_;  // the splitter's sizes when the window was last tall
  TraceDocument* doc_;
  QSplitter* split_;
  QWidget* failure_page_;  // the message and its buttons
  QLabel* failure_;
  QPushButton* open_again_;
  TimelineView* timeline_;
  QTabWidget* tabs_;
  StateView* state_;
  EventsView* events_;
  CallSitesView* callsites_;
  WhatIfPanel* whatif_;
  SegmentTimelineView* segments_ = nullptr;
};

}  // namespace reservoir::gui
