#include "app/trace_document.h"

#include <QFileInfo>
#include <QFutureWatcher>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

#include "reservoir/replay/report_text.h"

namespace reservoir::gui {

TraceDocument::TraceDocument(QString path, QObject* parent) : QObject(parent), path_(std::move(path)) {}

TraceDocument::~TraceDocument() { session_.reset(); }

QString TraceDocument::title() const { return QFileInfo(path_).fileName(); }

TraceDocument::Stage TraceDocument::stage() const {
  if (failed()) return Stage::kFailed;
  if (model_) return Stage::kReady;
  return recorded_ ? Stage::kModelling : Stage::kReading;
}

QString TraceDocument::stageWord() const {
  switch (stage()) {
    case Stage::kReading: return tr("reading");
    case Stage::kModelling: return tr("modelling");
    case Stage::kReady: return tr("ready");
    case Stage::kFailed: return tr("could not open");
  }
  return {};
}

void TraceDocument::start() {
  QPointer<TraceDocument> self(this);
  replay::SessionCallbacks cb;
  cb.progress = [self](replay::SessionStage stage, std::uint64_t done, std::uint64_t total) {
    const double f = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
    QMetaObject::invokeMethod(
        self,
        [self, stage, f] {
          if (self) emit self->progress(static_cast<int>(stage), f);
        },
        Qt::QueuedConnection);
  };
  cb.loaded = [self](std::shared_ptr<const replay::LoadStage> t) {
    auto plot = makeRecordedPlot(std::move(t));  // on the worker thread
    QMetaObject::invokeMethod(
        self,
        [self, plot] {
          if (self) self->onLoaded(plot);
        },
        Qt::QueuedConnection);
  };
  cb.modelled = [self](std::shared_ptr<const replay::ModelStage> m) {
    auto plot = makeModelPlot(std::move(m));
    QMetaObject::invokeMethod(
        self,
        [self, plot] {
          if (self) self->onModelled(plot);
        },
        Qt::QueuedConnection);
  };
  cb.failed = [self](const Status& why) {
    QMetaObject::invokeMethod(
        self,
        [self, m = QString::fromStdString(why.message()), h = QString::fromStdString(why.headline())] {
          if (self) self->onFailed(m, h);
        },
        Qt::QueuedConnection);
  };
  session_ = std::make_unique<replay::TraceSession>(path_.toStdString(), std::move(cb));
  session_->start();
}

void TraceDocument::cancel() {
  if (session_) session_->cancel();
}

void TraceDocument::onLoaded(std::shared_ptr<const RecordedPlot> plot) {
  recorded_ = std::move(plot);
  emit loaded();
}

void TraceDocument::onModelled(std::shared_ptr<const ModelPlot> plot) {
  model_ = std::move(plot);
  emit modelled();
  for (int i = 0; i < static_cast<int>(variants_.size()); ++i)
    if (variants_[static_cast<std::size_t>(i)].running && !variants_[static_cast<std::size_t>(i)].report) runVariant(i);
}

void TraceDocument::onFailed(const QString& message, const QString& headline) {
  // A failure after the first stage (the model) leaves the recorded views usable.
  error_ = message;
  error_headline_ = headline;
  emit failedToLoad(message);
}

void TraceDocument::setCursor(std::uint32_t event) {
  if (!recorded_) return;
  const auto n = static_cast<std::uint32_t>(recorded_->events());
  event = n == 0 ? 0 : std::min(event, n - 1);
  if (event == cursor_) return;
  cursor_ = event;
  emit cursorChanged(cursor_);
}

void TraceDocument::moveCursor(std::int64_t delta) {
  const std::int64_t e = static_cast<std::int64_t>(cursor_) + delta;
  setCursor(static_cast<std::uint32_t>(std::max<std::int64_t>(e, 0)));
}

std::uint32_t TraceDocument::peakEvent() const { return recorded_ ? recorded_->trace->series.peak_reserved_event : 0; }

void TraceDocument::jumpToPeak() { setCursor(peakEvent()); }

bool TraceDocument::busy() const {
  return running_ > 0 || ((recorded_ == nullptr || model_ == nullptr) && error_.isEmpty());
}

// "cleanup after:x.py:load, settings expandable_segments:True, capacity 80GiB, fraction 0.9".
QString variantName(const QStringList& edits, const QString& settings, const VariantDevice& device) {
  QStringList parts = edits;
  if (!settings.isEmpty()) parts << QStringLiteral("settings ") + settings;
  if (!device.capacity.trimmed().isEmpty()) parts << QStringLiteral("capacity ") + device.capacity.trimmed();
  if (!device.overhead.trimmed().isEmpty()) parts << QStringLiteral("overhead ") + device.overhead.trimmed();
  if (device.fraction) parts << QStringLiteral("fraction %1").arg(*device.fraction);
  return parts.join(QStringLiteral(", "));
}

int TraceDocument::addVariant(const QStringList& edits, const QString& settings, const VariantDevice& device) {
  Variant v;
  v.edits = edits;
  v.settings = settings;
  v.device = device;
  v.id = next_id_++;
  v.name = variantName(edits, settings, device);
  variants_.push_back(std::move(v));
  const int index = static_cast<int>(variants_.size()) - 1;
  ++running_;
  if (model_) runVariant(index);
  emit variantsChanged();
  return index;
}

void TraceDocument::removeVariant(int index) {
  if (index < 0 || index >= static_cast<int>(variants_.size())) return;
  if (variants_[static_cast<std::size_t>(index)].running) return;  // its result is on its way
  variants_.erase(variants_.begin() + index);
  if (selected_variant_ >= static_cast<int>(variants_.size())) selected_variant_ = -1;
  emit variantsChanged();
  emit variantSelected(selected_variant_);
}

void TraceDocument::selectVariant(int index) {
  if (index >= static_cast<int>(variants_.size())) index = -1;
  selected_variant_ = index;
  emit variantSelected(index);
}

namespace {

struct VariantOutcome {
  std::shared_ptr<const replay::WhatIfReport> report;
  std::shared_ptr<const OpCurve> curve;
  QString text, error;
};

VariantOutcome computeVariant(std::shared_ptr<const ModelPlot> model, QStringList edits, QString settings,
                              VariantDevice device) {
  VariantOutcome out;
  auto options = makeWhatIfOptions(edits, settings, device);
  if (!options) {
    out.error = QString::fromStdString(options.message());
    return out;
  }
  options->keep_curves = true;  // the edited run's, compact (a timeline point per op for both runs was 64 bytes an op)
  const replay::ModelStage& stage = *model->model;
  auto rep = replay::runWhatIfPrepared(stage, *options);
  if (!rep) {
    out.error = QString::fromStdString(rep.message());
    return out;
  }
  out.curve = makeOpCurve(std::move(rep->whatif.curves.reserved));
  rep->whatif.curves = replay::OpCurves{};  // the reserved curve is out.curve's; the baseline is the model's
  out.text = QString::fromStdString(replay::whatIfReportText(stage.trace.snap(), *rep, stage.trace.path));
  auto shared = std::make_shared<replay::WhatIfReport>(std::move(*rep));
  out.report = std::move(shared);
  return out;
}

}  // namespace

int TraceDocument::indexOf(int id) const {
  for (std::size_t i = 0; i < variants_.size(); ++i)
    if (variants_[i].id == id) return static_cast<int>(i);
  return -1;
}

void TraceDocument::runVariant(int index) {
  const Variant& v = variants_[static_cast<std::size_t>(index)];
  QPointer<TraceDocument> self(this);
  auto model = model_;
  auto future = QtConcurrent::run(
      [model, edits = v.edits, settings = v.settings, device = v.device] {
        return computeVariant(model, edits, settings, device);
      });
  auto* watcher = new QFutureWatcher<VariantOutcome>(this);
  connect(watcher, &QFutureWatcher<VariantOutcome>::finished, this, [this, watcher, id = v.id] {
    const VariantOutcome o = watcher->result();
    watcher->deleteLater();
    const int at = indexOf(id);
    if (at < 0) return;
    Variant& var = variants_[static_cast<std::size_t>(at)];
    var.running = false;
    var.report = o.report;
    var.curve = o.curve;
    var.report_text = o.text;
    var.error = o.error;
    --running_;
    emit variantsChanged();
    if (selected_variant_ < 0 && o.error.isEmpty()) selectVariant(at);
  });
  watcher->setFuture(future);
}

}  // namespace reservoir::gui
