#include "models/facts_model.h"

#include <QFileInfo>

#include <algorithm>
#include <QFont>

#include "app/format.h"
#include "app/trace_document.h"
#include "reservoir/replay/peak_explain.h"
#include "reservoir/replay/session.h"
#include "reservoir/replay/stat_words.h"
#include "reservoir/simulator/alloc_config.h"

namespace reservoir::gui {

FactsModel::FactsModel(QObject* parent) : QAbstractTableModel(parent) {}

namespace {

struct FactRow {
  QString group, name, value;
  QString tooltip;  // more than the value (e.g. the raw memory_stats() keys), or empty
};

// A statistic's value as shown: a size for the byte counts.
QString statValue(const std::string& key, const std::string& value) {
  if (!replay::statKeyIsBytes(key)) return QString::fromStdString(value);
  bool ok = false;
  const qlonglong bytes = QString::fromStdString(value).toLongLong(&ok);
  return ok ? sizeText(bytes) : QString::fromStdString(value);
}

}  // namespace

// What the conformance replay found, in words: every event reproduced, and which final
// figures differ (the capture's statistics are read at dump time, so e.g. a peak count the
// process reached before recording started differs without any event being wrong). The
// statistics are named in words (replay::statKeyWords); `raw` gets their memory_stats() keys.
QString conformanceText(const replay::ConformanceReport& c, QString* raw) {
  if (c.first_divergence) return QStringLiteral("diverges at event %1").arg(c.first_divergence->event_index);
  QStringList parts, keys;
  if (!c.layout_mismatches.empty())
    parts << QStringLiteral("%1 segment(s) of the final layout differ").arg(c.layout_mismatches.size());
  QStringList stats;
  for (std::size_t i = 0; i < c.stats_mismatches.size() && i < 3; ++i) {
    const auto& m = c.stats_mismatches[i];
    stats << QStringLiteral("%1: recorded %2, model %3")
                 .arg(QString::fromStdString(replay::statKeyWords(m.what)), statValue(m.what, m.expected),
                      statValue(m.what, m.simulated));
  }
  for (const auto& m : c.stats_mismatches)
    keys << QStringLiteral("%1: recorded %2, model %3")
                .arg(QString::fromStdString(m.what), QString::fromStdString(m.expected),
                     QString::fromStdString(m.simulated));
  if (c.stats_mismatches.size() > 3) stats << QStringLiteral("%1 more").arg(c.stats_mismatches.size() - 3);
  if (!stats.isEmpty())
    parts << QStringLiteral("the recorded statistics differ: %1").arg(stats.join(QStringLiteral("; ")));
  if (raw && !keys.isEmpty())
    *raw = QStringLiteral("memory_stats() keys:\n%1").arg(keys.join(QLatin1Char('\n')));
  if (parts.isEmpty()) return QStringLiteral("every event, the final layout and statistics");
  return QStringLiteral("every event; but %1").arg(parts.join(QStringLiteral("; ")));
}

void FactsModel::setDocument(TraceDocument* doc) {
  setDocuments(doc ? std::vector<TraceDocument*>{doc} : std::vector<TraceDocument*>{});
}

void FactsModel::setDocuments(const std::vector<TraceDocument*>& docs) {
  for (auto* d : docs_) disconnect(d, nullptr, this, nullptr);
  docs_ = docs;
  for (auto* d : docs_) {
    connect(d, &TraceDocument::loaded, this, &FactsModel::rebuild);
    connect(d, &TraceDocument::modelled, this, &FactsModel::rebuild);
    connect(d, &TraceDocument::failedToLoad, this, &FactsModel::rebuild);
    connect(d, &QObject::destroyed, this, [this, d] {
      docs_.erase(std::remove(docs_.begin(), docs_.end(), d), docs_.end());
      rebuild();
    });
  }
  rebuild();
}

namespace {

QString yesNo(bool b) { return b ? QStringLiteral("yes") : QStringLiteral("no"); }

void settingsRows(const traces::RecordedSettings& s, std::vector<std::pair<QString, QString>>& out) {
  out.emplace_back(QStringLiteral("PYTORCH_CUDA_ALLOC_CONF"),
                   s.alloc_conf.empty() ? QStringLiteral("(default)") : QString::fromStdString(s.alloc_conf));
  out.emplace_back(QStringLiteral("expandable_segments"), yesNo(s.expandable_segments));
  out.emplace_back(QStringLiteral("max_split_size"),
                   s.max_split_size < 0 ? QStringLiteral("unlimited") : sizeText(s.max_split_size));
  out.emplace_back(QStringLiteral("garbage_collection_threshold"), QString::number(s.garbage_collection_threshold));
  QStringList div;
  for (std::size_t i = 0; i < s.roundup_power2_divisions.size(); ++i)
    if (s.roundup_power2_divisions[i])
      div << QStringLiteral("%1MiB:%2").arg(1u << i).arg(s.roundup_power2_divisions[i]);
  out.emplace_back(QStringLiteral("roundup_power2_divisions"),
                   div.isEmpty() ? QStringLiteral("none") : div.join(QLatin1Char(' ')));
  for (const auto& [k, v] : s.other) out.emplace_back(QString::fromStdString(k), QString::fromStdString(v));
}

}  // namespace

namespace {

QString riseText(std::int64_t bytes) { return (bytes < 0 ? QString() : QStringLiteral("+")) + sizeText(bytes); }

QString stepWhere(const traces::Snapshot& snap, const replay::PeakStep& s) {
  const QString frame = topUserFrame(snap, s.stack);
  return frame.isEmpty() ? QStringLiteral("event %1").arg(s.event)
                         : QStringLiteral("event %1, %2").arg(s.event).arg(frame);
}

// A climb of several ops: "+7.46 GiB over events 2850-2899 (9 steps)"; of one: "+1.95 GiB".
QString climbSpan(const replay::PeakClimb& c) {
  if (c.oneOp()) return riseText(c.held);
  return QStringLiteral("%1 over events %2-%3 (%4 steps)")
      .arg(riseText(c.held))
      .arg(c.first.event)
      .arg(c.last.event)
      .arg(c.rising_ops);
}

}  // namespace

QString peakOriginText(const traces::Snapshot& snap, const replay::PeakOrigin& o) {
  if (!o.known) return QStringLiteral("unknown");
  const QString set = QStringLiteral("%1 set it (%2)").arg(stepWhere(snap, o.set), riseText(o.set.rise()));
  if (o.setByItsClimb()) return set + QStringLiteral("; no larger rise before it");
  const replay::PeakClimb& c = o.climb;
  if (c.oneOp())
    return set + QStringLiteral("; the rise that made it: %1 still held from %2").arg(riseText(c.held), stepWhere(snap, c.largest));
  return set + QStringLiteral("; the rise that made it: %1 still held, the largest step %2 at %3")
                   .arg(climbSpan(c), riseText(c.largest.rise()), stepWhere(snap, c.largest));
}

QString peakOriginHtml(const traces::Snapshot& snap, const replay::PeakOrigin& o) {
  if (!o.known) return {};
  const QString what = o.quantity == replay::PeakQuantity::kReserved ? QStringLiteral("reserved")
                                                                      : QStringLiteral("allocated");
  QString h = QStringLiteral("<b>peak %1: %2</b> at event %3 (%4 there)<br>%5")
                  .arg(what, sizeText(o.peak))
                  .arg(o.set.event)
                  .arg(riseText(o.set.rise()), stackHtml(snap, o.set.stack, 8));
  const replay::PeakClimb& c = o.climb;
  if (o.setByItsClimb()) return h;
  if (c.oneOp())
    h += QStringLiteral("<br><b>the rise that made it:</b> %1 still held at the peak, from event %2 (%3 there)<br>%4")
             .arg(riseText(c.held))
             .arg(c.largest.event)
             .arg(riseText(c.largest.rise()), stackHtml(snap, c.largest.stack, 8));
  else
    h += QStringLiteral("<br><b>the rise that made it:</b> %1 still held at the peak (%2 -&gt; %3); "
                        "its largest step %4 at event %5<br>%6")
             .arg(climbSpan(c), sizeText(c.first.before), sizeText(c.last.after), riseText(c.largest.rise()))
             .arg(c.largest.event)
             .arg(stackHtml(snap, c.largest.stack, 8));
  return h;
}

namespace {

std::vector<FactRow> factRows(const TraceDocument* doc) {
  std::vector<FactRow> rows;
  const auto rec = doc ? doc->recorded() : nullptr;
  if (rec) {
    const auto& f = rec->trace->facts;
    const auto& s = rec->trace->series;
    auto add = [&](const QString& g, const QString& n, const QString& v) { rows.push_back(FactRow{g, n, v, {}}); };
    const QString t = QStringLiteral("trace");
    add(t, QStringLiteral("file"), QString::fromStdString(f.path));
    add(t, QStringLiteral("file size"), sizeText(static_cast<std::int64_t>(f.file_bytes)));
    add(t, QStringLiteral("device"), QStringLiteral("%1 (of %2 traced)").arg(f.device).arg(f.devices));
    add(t, QStringLiteral("events"), QString::number(f.events));
    add(t, QStringLiteral("allocations"), QString::number(f.allocations));
    add(t, QStringLiteral("time span"),
        f.last_time_us >= f.first_time_us ? timeText(f.last_time_us - f.first_time_us)
                                          : QStringLiteral("unknown (time_us goes backwards: see the anomalies)"));
    add(t, QStringLiteral("window"),
        f.complete ? QStringLiteral("complete (starts empty)")
                   : QStringLiteral("truncated (starts with %1 reserved)").arg(sizeText(f.start_reserved)));
    add(t, QStringLiteral("peak reserved"),
        QStringLiteral("%1 at event %2").arg(sizeText(s.peak_reserved)).arg(s.peak_reserved_event));
    add(t, QStringLiteral("peak live (requested)"),
        QStringLiteral("%1 at event %2").arg(sizeText(s.peak_live)).arg(s.peak_live_event));
    add(t, QStringLiteral("out-of-memory events"), QString::number(s.ooms.size()));
    add(t, QStringLiteral("annotations"), QString::number(rec->trace->annotations.size()));
    add(t, QStringLiteral("frames / stacks"), QStringLiteral("%1 / %2").arg(f.frames).arg(f.stacks));
    if (!s.mapped.empty()) add(t, QStringLiteral("expandable pages mapped (end)"), sizeText(s.mapped.back()));
    std::vector<std::pair<QString, QString>> settings;
    settingsRows(rec->trace->snapshot().settings, settings);
    for (auto& [n, v] : settings) add(QStringLiteral("allocator settings"), n, v);
    if (const auto m = doc->model()) {
      const auto& c = m->model->prepared.conformance;
      const QString g = QStringLiteral("model");
      QString raw;
      const QString replays = conformanceText(c, &raw);
      add(g, QStringLiteral("replays the recording"), replays);
      if (!raw.isEmpty()) rows.back().tooltip = raw;
      if (c.first_divergence)
        add(g, QStringLiteral("first divergence"), QStringLiteral("event %1").arg(c.first_divergence->event_index));
      add(g, QStringLiteral("peak reserved came from"),
          peakOriginText(rec->trace->snapshot(), m->reserved_origin));
      add(g, QStringLiteral("peak allocated (model)"),
          QStringLiteral("%1 at event %2").arg(sizeText(m->peak_allocated)).arg(m->peak_allocated_event));
      if (!f.complete) {
        // What the bands cannot show: blocks alive when the window began that it never frees.
        const replay::WindowStartBlocks w = replay::windowStartBlocks(*rec->trace, *m->model);
        QString text = QStringLiteral("%1 in %2 blocks at the start").arg(sizeText(w.bytes)).arg(w.blocks);
        if (w.neverFreedBlocks() > 0)
          text += QStringLiteral("; %1 of them (about %2), never freed in the window, have no band: no event of "
                                 "theirs is in the trace (the allocated curve includes them)")
                      .arg(w.neverFreedBlocks())
                      .arg(sizeText(w.neverFreedBytes()));
        else
          text += QStringLiteral(" (each has a band from the start: the window frees it)");
        add(g, QStringLiteral("allocated before the window"), text);
      }
      add(g, QStringLiteral("memory fraction"), QString::number(c.fraction));
      add(g, QStringLiteral("empty_cache calls (inferred)"), QString::number(c.empty_cache_calls));
      add(g, QStringLiteral("ops"), QString::number(m->model->prepared.program.ops.size()));
    }
    if (!f.anomalies.empty())
      for (const auto& line : QString::fromStdString(f.anomalies).split(QLatin1Char('\n'), Qt::SkipEmptyParts))
        add(QStringLiteral("anomalies"), line.section(QLatin1Char(' '), 2, 2), line);
  }
  if (!rec && doc && doc->failed()) {
    // A file that did not open: which file, and why (the panel was empty).
    const QString t = QStringLiteral("trace");
    rows.push_back(FactRow{t, QStringLiteral("file"), doc->path(), {}});
    const QFileInfo info(doc->path());
    if (info.exists()) rows.push_back(FactRow{t, QStringLiteral("file size"), sizeText(info.size()), {}});
    rows.push_back(FactRow{t, QStringLiteral("could not open"), doc->errorInBrief(), {}});
    rows.back().tooltip = doc->error();
  }
  return rows;
}

}  // namespace

void FactsModel::rebuild() {
  beginResetModel();
  rows_.clear();
  const std::size_t n = docs_.size();
  for (std::size_t d = 0; d < n; ++d) {
    std::vector<std::pair<QString, int>> seen;  // group + name, and how often so far in this document
    for (auto& r : factRows(docs_[d])) {
      const QString key = r.group + QLatin1Char('\n') + r.name;
      auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& k) { return k.first == key; });
      const int occurrence = it == seen.end() ? 0 : ++it->second;
      if (it == seen.end()) seen.emplace_back(key, 0);
      auto row = std::find_if(rows_.begin(), rows_.end(), [&](const Merged& m) {
        return m.occurrence == occurrence && m.name == r.name && m.group == r.group;
      });
      if (row == rows_.end()) {
        // A fact the documents before lack: after the last row of its group (or at the end).
        auto at = rows_.end();
        for (auto k = rows_.begin(); k != rows_.end(); ++k)
          if (k->group == r.group) at = k + 1;
        row = rows_.insert(at, Merged{r.group, r.name, occurrence, std::vector<QString>(n), std::vector<QString>(n)});
      }
      row->values[d] = std::move(r.value);
      row->tooltips[d] = std::move(r.tooltip);
    }
  }
  endResetModel();
}

int FactsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}
int FactsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : 1 + static_cast<int>(std::max<std::size_t>(docs_.size(), 1));
}

QVariant FactsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= static_cast<int>(rows_.size())) return {};
  const Merged& r = rows_[static_cast<std::size_t>(index.row())];
  if (role == GroupRole) return r.group;
  const auto d = static_cast<std::size_t>(std::max(index.column() - 1, 0));
  const QString value = d < r.values.size() ? r.values[d] : QString();
  const QString tip = d < r.tooltips.size() ? r.tooltips[d] : QString();
  if (role == Qt::ToolTipRole) {
    QString head = r.group + QStringLiteral(": ") + (index.column() == 0 ? r.name : value);
    if (index.column() > 0 && docs_.size() > 1 && docs_[d]) head = docs_[d]->title() + QStringLiteral(", ") + head;
    return head + (tip.isEmpty() ? QString() : QStringLiteral("\n\n") + tip);
  }
  if (role != Qt::DisplayRole) return {};
  if (index.column() == 0) return r.name;
  // A path may break after each '/' when the panel wraps it (a zero-width space), instead of
  // being cut off as one long word.
  QString shown = value;
  if (!shown.contains(QLatin1Char(' '))) shown.replace(QLatin1Char('/'), QStringLiteral("/\u200b"));
  return shown;
}

QVariant FactsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || (role != Qt::DisplayRole && role != Qt::ToolTipRole)) return {};
  if (section == 0) return QStringLiteral("fact");
  const auto d = static_cast<std::size_t>(section - 1);
  if (docs_.size() <= 1 || d >= docs_.size() || !docs_[d]) return QStringLiteral("value");
  return role == Qt::ToolTipRole ? docs_[d]->path() : docs_[d]->title();
}

}  // namespace reservoir::gui
