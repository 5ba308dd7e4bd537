// One opened trace: its loading session, the immutable stages it published, the plots built
// on them, the cursor (an event index) and the what-if variants. Lives on the GUI thread;
// everything heavy runs on worker threads and arrives through queued calls.
#pragma once

#include <QObject>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

#include "app/plot_data.h"
#include "reservoir/replay/session.h"

namespace reservoir::gui {

// The edited run's device as the what-if panel's Device group gives it: texts the library
// parses (replay::parseEditedRunOptions), empty for the recorded device.
struct VariantDevice {
  QString capacity;  // a size ("80GiB", "150109880320"); empty: from recorded ooms, else unlimited
  QString overhead;  // memory outside PyTorch's cache; empty: none
  std::optional<double> fraction;  // memory fraction; none: the recorded one
};

struct Variant {
  int id = 0;
  QString name;       // what the user asked for ("cleanup after:...")
  QStringList edits;  // the edit texts, e.g. "cleanup after:x.py:load"
  QString settings;   // PYTORCH_CUDA_ALLOC_CONF for the edited run ("" = recorded)
  VariantDevice device;
  std::shared_ptr<const replay::WhatIfReport> report;
  std::shared_ptr<const OpCurve> curve;  // predicted reserved per op
  QString report_text;                   // the CLI's report
  QString error;
  bool running = true;
};

class TraceDocument : public QObject {
  Q_OBJECT

 public:
  explicit TraceDocument(QString path, QObject* parent = nullptr);
  ~TraceDocument() override;

  void start();
  void cancel();

  [[nodiscard]] const QString& path() const { return path_; }
  [[nodiscard]] QString title() const;
  [[nodiscard]] std::shared_ptr<const RecordedPlot> recorded() const { return recorded_; }
  [[nodiscard]] std::shared_ptr<const ModelPlot> model() const { return model_; }
  [[nodiscard]] bool isModelled() const { return model_ != nullptr; }
  [[nodiscard]] bool failed() const { return !error_.isEmpty(); }
  [[nodiscard]] const QString& error() const { return error_; }
  // The error in plain words ("the file ends early: was the dump interrupted?"), empty when the
  // reader gave none; error() begins with it and adds the file, the byte and the detail.
  [[nodiscard]] const QString& errorHeadline() const { return error_headline_; }
  // Why it failed, briefly: the headline, or the whole message where the failure gave none.
  [[nodiscard]] const QString& errorInBrief() const { return error_headline_.isEmpty() ? error_ : error_headline_; }
  // Where loading stands, derived from what was published: the progress label, the status
  // bar and the plot's header all name it with stageWord(), so they never disagree.
  enum class Stage : std::uint8_t { kReading, kModelling, kReady, kFailed };
  [[nodiscard]] Stage stage() const;
  [[nodiscard]] bool loading() const { return stage() == Stage::kReading || stage() == Stage::kModelling; }
  // "reading", "modelling", "ready", "could not open".
  [[nodiscard]] QString stageWord() const;

  [[nodiscard]] std::uint32_t cursor() const { return cursor_; }
  void setCursor(std::uint32_t event);
  void moveCursor(std::int64_t delta);
  void jumpToPeak();
  [[nodiscard]] std::uint32_t peakEvent() const;

  // What-if variants: each runs on a worker thread on the prepared trace.
  [[nodiscard]] const std::vector<Variant>& variants() const { return variants_; }
  int addVariant(const QStringList& edits, const QString& settings, const VariantDevice& device = {});
  void removeVariant(int index);
  [[nodiscard]] int selectedVariant() const { return selected_variant_; }
  void selectVariant(int index);
  [[nodiscard]] bool busy() const;

 signals:
  void progress(int stage, double fraction);
  void loaded();
  void modelled();
  void failedToLoad(const QString& message);
  void cursorChanged(std::uint32_t event);
  void variantsChanged();
  void variantSelected(int index);

 private:
  void onLoaded(std::shared_ptr<const RecordedPlot> plot);
  void onModelled(std::shared_ptr<const ModelPlot> plot);
  void onFailed(const QString& message, const QString& headline);
  void runVariant(int index);
  int indexOf(int id) const;

  QString path_;
  std::unique_ptr<replay::TraceSession> session_;
  std::shared_ptr<const RecordedPlot> recorded_;
  std::shared_ptr<const ModelPlot> model_;
  QString error_;
  QString error_headline_;
  std::uint32_t cursor_ = 0;
  std::vector<Variant> variants_;
  int selected_variant_ = -1;
  int running_ = 0;
  int next_id_ = 1;
};

// A variant's name from what it was given: "cleanup after:x.py:load, settings
// expandable_segments:True, capacity 80GiB, fraction 0.9" (the edits, then the device's fields
// that are set; empty when nothing is).
QString variantName(const QStringList& edits, const QString& settings, const VariantDevice& device);

// Parses edit texts ("cleanup POINT", "release SEL@POINT", "probe POINT", "demand B@POINT",
// "reset-peaks POINT"), the settings and the device into what-if options (the library's rules);
// the error names the bad text and the field it came from.
Expected<replay::WhatIfOptions> makeWhatIfOptions(const QStringList& edits, const QString& settings,
                                                  const VariantDevice& device = {});

}  // namespace reservoir::gui
