// The main window: a tab per opened trace, a comparison tab, the facts side panel, loading
// progress with cancel, menus, keyboard navigation and export.
#pragma once

#include <QHash>
#include <QMainWindow>

#include <functional>
#include <vector>

#include "reservoir/core/status.h"

class QDockWidget;
class QLabel;
class QProgressBar;
class QPushButton;
class QTabWidget;
class QTableView;

namespace reservoir::gui {

class CompareView;
class FactsModel;
class TraceDocument;
class TraceWidget;

// The facts panel's width: it opens at this width and gets it back after the window shrank.
inline constexpr int kFactsWidth = 440;
// Narrower windows (a laptop's) shrink the side panel to a quarter of their width.
inline constexpr int kNarrowWindow = 1400;

// The size an interactive window opens at: the size asked for, at most the screen's available
// size less room for the window's frame (a laptop's 1280x720 never gets a 1600x1000 window).
QSize openingSize(QSize wanted, QSize available);

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens traces (each loads on its own worker thread).
  void openFiles(const QStringList& paths);
  [[nodiscard]] const std::vector<TraceDocument*>& documents() const { return docs_; }
  [[nodiscard]] TraceWidget* traceWidget(int index) const;
  [[nodiscard]] TraceWidget* currentTraceWidget() const;
  [[nodiscard]] CompareView* compareView() const { return compare_; }
  void showCompare();
  // Help > Points and selectors: the library's syntax text (replay::pointSyntaxHelp).
  void showPointHelp();
  void showTrace(int index);
  // No modal dialogs (errors go to stderr): for --screenshot and tests.
  void setBatchMode(bool on) { batch_ = on; }
  [[nodiscard]] QStringList errors() const { return errors_; }
  [[nodiscard]] QTabWidget* tabs() const { return tabs_; }
  [[nodiscard]] QDockWidget* factsDock() const { return facts_dock_; }
  [[nodiscard]] QString statusText() const;
  // The first line of the bad-file dialog: the file and the reader's plain words
  // ("bad.pickle: not a PyTorch memory snapshot: ..."); the whole message comes under it.
  [[nodiscard]] QString failureSummary(const TraceDocument* doc) const;
  // The loading progress in the status bar (hidden when nothing loads) and its label.
  [[nodiscard]] QProgressBar* progressBar() const { return progress_; }
  // Closes a tab: a trace (its document goes) or the comparison.
  void closeTab(int index);
  // A page whose file did not open: closes it and reads the same file again, in a new page.
  void openAgain(TraceWidget* page);
  // Writes the plot on screen (timeline or comparison) as PNG or SVG (by extension).
  bool exportPlot(const QString& path, QSize size = {});
  [[nodiscard]] FactsModel* facts() const { return facts_; }
  // Writes the current trace's selected what-if variant (or the baseline) as a snapshot.
  [[nodiscard]] Status exportSnapshot(const QString& path) const;
  // What File > Export what-if as snapshot asks before it writes the unedited run (no variant
  // selected); empty when a variant is selected. The question goes to `confirm_export` (a
  // dialog unless replaced, e.g. by tests).
  [[nodiscard]] QString exportSnapshotQuestion() const;
  void setExportConfirmation(std::function<bool(const QString& question)> confirm) {
    confirm_export_ = std::move(confirm);
  }
  void setFactsVisible(bool on);
  // What quitting would lose ("2 what-if variants"), empty when nothing; a close with
  // something to lose asks `confirm_quit` (a dialog unless replaced, e.g. by tests).
  [[nodiscard]] QString unsavedWork() const;
  void setQuitConfirmation(std::function<bool(const QString& question)> confirm) { confirm_quit_ = std::move(confirm); }

 protected:
  void closeEvent(QCloseEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void showEvent(QShowEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;
  // The facts' name column: as wide as its names, but at most 45% of the panel (the values wrap
  // in the rest; on a laptop the names wrap too rather than push the values out of view).
  void fitFactNames();
  // The facts panel's width for the window's (resizeEvent's rule).
  void fitFactsDock();
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void buildMenus();
  void buildNavigation(QMenu* menu);
  void buildStatusBar();
  void onCurrentTabChanged();
  void onProgress(TraceDocument* doc, int stage, double fraction);
  // The document the progress bar speaks of: the one in view while it loads, else the first
  // still loading (nullptr: none loads).
  [[nodiscard]] TraceDocument* progressDocument() const;
  // Shows or hides the bar and names the stage of progressDocument() in its label.
  void refreshProgress();
  void onFailed(TraceDocument* doc, const QString& message);
  // The Compare tab exists while at least two traces opened without error.
  void updateCompareTab();
  void showStatusOf(TraceDocument* doc);
  void openDialog();
  void exportDialog();
  void exportSnapshotDialog();
  [[nodiscard]] TraceDocument* currentDocument() const;

  std::vector<TraceDocument*> docs_;
  std::vector<TraceWidget*> pages_;
  QTabWidget* tabs_;
  CompareView* compare_;
  FactsModel* facts_;
  QTableView* facts_view_;
  QDockWidget* facts_dock_ = nullptr;
  QProgressBar* progress_;
  QPushButton* cancel_;
  QLabel* status_;
  bool batch_ = false;
  QStringList errors_;
  QHash<const TraceDocument*, double> bar_of_;  // each loading document's share of its bar
  std::function<bool(const QString&)> confirm_quit_;
  std::function<bool(const QString&)> confirm_export_;
};

}  // namespace reservoir::gui
