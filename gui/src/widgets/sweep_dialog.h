// A sweep (replay/sweep.h) started from the what-if panel: candidate cleanups and settings
// replayed on a worker thread with progress and cancel, ranked; a candidate can be run as a
// variant.
#pragma once

#include <QDialog>

#include <atomic>
#include <memory>

#include "reservoir/replay/sweep.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace reservoir::gui {

class TraceDocument;

class SweepDialog : public QDialog {
  Q_OBJECT

 public:
  explicit SweepDialog(TraceDocument* doc, QWidget* parent = nullptr);
  ~SweepDialog() override;
  void start();
  // The device the candidates run on (the what-if panel's Device group: capacity, overhead,
  // fraction, settings), `words` saying so above the table; by default the recorded one.
  // A candidate that changes no settings runs as a variant with `settings`.
  void setDevice(const replay::EditedRunOptions& device, const QString& words, const QString& settings);
  [[nodiscard]] QString deviceText() const;
  // The objective: "peak", "reserved:POINT" or "peak-in:ANNOTATION" (the choice above the table).
  void setObjective(const QString& text);
  [[nodiscard]] QString objectiveText() const;
  void cancel();
  [[nodiscard]] bool running() const { return running_; }
  [[nodiscard]] const replay::SweepReport* report() const { return report_.get(); }
  [[nodiscard]] QTableWidget* table() const { return table_; }
  // Cancel while the sweep runs, Close once it has ended; Start, then Run again.
  [[nodiscard]] QPushButton* closeButton() const { return close_; }
  [[nodiscard]] QPushButton* startButton() const { return start_; }
  [[nodiscard]] QPushButton* copyButton() const { return copy_; }
  // The selected row's edit as command-line flags (what Copy edit copies); empty: none selected.
  [[nodiscard]] QString selectedEdit() const;
  [[nodiscard]] QProgressBar* progressBar() const { return progress_; }
  [[nodiscard]] QString statusText() const;
  // Runs the candidate of a table row (as sorted) as a variant.
  void runRow(int row);
  // Rows shown while the sweep ran (each candidate as it was replayed).
  [[nodiscard]] int rowsShownWhileRunning() const { return arrived_; }

 signals:
  void runCandidate(const QStringList& edits, const QString& settings);
  // A candidate was replayed and its row added (while the sweep runs; `rows` shown so far).
  void candidateShown(int rows);
  // The sweep ended (finished, cancelled or failed) and the table holds the final ranking.
  void finished();

 protected:
  void resizeEvent(QResizeEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  static constexpr int kMinCandidateWidth = 160, kMinEditWidth = 120;
  [[nodiscard]] int candidateRoom() const;
  void fitColumns();
  void showReport();
  void addArrived(const replay::SweepCandidate& c);
  void fillRow(int row, const replay::SweepCandidate& c, int rank);
  void useSelected();
  void showRunning(bool running);
  TraceDocument* doc_;
  QComboBox* objective_;
  QLineEdit* target_;
  QProgressBar* progress_;
  QLabel* status_;
  QLabel* device_label_;
  QTableWidget* table_;
  QPushButton* use_;
  QPushButton* copy_;
  QPushButton* close_;
  QPushButton* start_;
  std::shared_ptr<std::atomic<bool>> cancel_ = std::make_shared<std::atomic<bool>>(false);
  std::shared_ptr<replay::SweepReport> report_;
  replay::EditedRunOptions device_;
  QString device_settings_;
  bool running_ = false;
  int arrived_ = 0;
};

// A candidate's CLI flags ({"--cleanup", "after:x"} ...) as edit texts and settings.
void candidateToEdits(const std::vector<std::string>& flags, QStringList* edits, QString* settings);

// The dialog's opening size beside a window of `window`: 1200x560 (a laptop's), or three quarters
// of a larger window, so that on a large screen the candidates read whole.
QSize sweepDialogSize(QSize window);

}  // namespace reservoir::gui
