#include "app/format.h"

#include <QFileInfo>

#include "reservoir/replay/frame_text.h"
#include "reservoir/simulator/sizes.h"

namespace reservoir::gui {

QString sizeText(std::int64_t bytes) {
  const auto text = sim::formatSize(static_cast<std::uint64_t>(bytes < 0 ? -bytes : bytes));
  return (bytes < 0 ? QStringLiteral("-") : QString()) + QString::fromStdString(text);
}

QString exactSizeText(std::int64_t bytes) { return QStringLiteral("%1 (%2 bytes)").arg(sizeText(bytes)).arg(bytes); }

QString timeText(std::int64_t us) {
  const double a = std::abs(static_cast<double>(us));
  if (a >= 1e6) return QString::number(static_cast<double>(us) / 1e6, 'f', 3) + QStringLiteral(" s");
  if (a >= 1e3) return QString::number(static_cast<double>(us) / 1e3, 'f', 2) + QStringLiteral(" ms");
  return QString::number(us) + QStringLiteral(" us");
}

QString addressText(std::uint64_t address) { return QStringLiteral("0x") + QString::number(address, 16); }

namespace {

QString fileOf(const traces::Snapshot& snap, const traces::Frame& f, bool short_name) {
  const auto file = QString::fromUtf8(snap.str(f.filename).data(), static_cast<qsizetype>(snap.str(f.filename).size()));
  return short_name ? QFileInfo(file).fileName() : file;
}

// The library's display rule (replay::shortFramePath): "…/optim/adam.py".
QString displayFileOf(const traces::Snapshot& snap, const traces::Frame& f) {
  return QString::fromStdString(replay::shortFramePath(snap.str(f.filename)));
}

QString nameOf(const traces::Snapshot& snap, const traces::Frame& f) {
  const auto n = snap.str(f.name);
  return QString::fromUtf8(n.data(), static_cast<qsizetype>(n.size()));
}

}  // namespace

QString frameText(const traces::Snapshot& snap, FrameId id) {
  if (!id.valid() || id.value() >= snap.frames.size()) return QStringLiteral("(all)");
  const auto& f = snap.frames[id.value()];
  return QStringLiteral("%1 (%2:%3)").arg(nameOf(snap, f), fileOf(snap, f, false)).arg(f.line);
}

QString shortFrameText(const traces::Snapshot& snap, FrameId id) {
  if (!id.valid() || id.value() >= snap.frames.size()) return QStringLiteral("(all)");
  const auto& f = snap.frames[id.value()];
  return QStringLiteral("%1 (%2:%3)").arg(nameOf(snap, f), displayFileOf(snap, f)).arg(f.line);
}

QString stackText(const traces::Snapshot& snap, StackId stack, int max_frames) {
  if (!stack.valid()) return QStringLiteral("(no stack)");
  const auto frames = snap.stack(stack);
  if (frames.empty()) return QStringLiteral("(no frames recorded)");
  QStringList lines;
  for (std::size_t i = 0; i < frames.size() && static_cast<int>(i) < max_frames; ++i)
    lines << shortFrameText(snap, frames[i]);
  if (static_cast<int>(frames.size()) > max_frames)
    lines << QStringLiteral("... %1 more").arg(frames.size() - static_cast<std::size_t>(max_frames));
  return lines.join(QLatin1Char('\n'));
}

QString stackHtml(const traces::Snapshot& snap, StackId stack, int max_frames) {
  if (!stack.valid() || snap.stack(stack).empty()) return QStringLiteral("<i>no frames recorded</i>");
  QString html = QStringLiteral("<table cellspacing=0 cellpadding=1>");
  const auto frames = snap.stack(stack);
  for (std::size_t i = 0; i < frames.size() && static_cast<int>(i) < max_frames; ++i) {
    const auto& f = snap.frames[frames[i].value()];
    html += QStringLiteral("<tr><td><a href=\"frame:%1\">%2</a></td><td style='color:#666'>%3:%4</td></tr>")
                .arg(frames[i].value())
                .arg(nameOf(snap, f).toHtmlEscaped(), displayFileOf(snap, f).toHtmlEscaped())
                .arg(f.line);
  }
  if (static_cast<int>(frames.size()) > max_frames)
    html += QStringLiteral("<tr><td colspan=2><i>... %1 more</i></td></tr>")
                .arg(frames.size() - static_cast<std::size_t>(max_frames));
  return html + QStringLiteral("</table>");
}

QString topUserFrame(const traces::Snapshot& snap, StackId stack) {
  if (!stack.valid()) return {};
  const auto frames = snap.stack(stack);
  for (const auto id : frames) {
    const auto file = snap.str(snap.frames[id.value()].filename);
    if (file.find("/torch/") == std::string_view::npos && file.find("<") == std::string_view::npos)
      return shortFrameText(snap, id);
  }
  return frames.empty() ? QString() : shortFrameText(snap, frames.front());
}

QString pointForFrame(const traces::Snapshot& snap, FrameId id, bool after) {
  const auto& f = snap.frames[id.value()];
  return QStringLiteral("%1:%2:%3")
      .arg(after ? QStringLiteral("after") : QStringLiteral("before"), fileOf(snap, f, true), nameOf(snap, f));
}

}  // namespace reservoir::gui
