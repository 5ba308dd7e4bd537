// Escaping, geometry and drawing rules of the report's page (html_util.h); report.js repeats the
// drawing rules for a zoomed range, so both draw the full range alike.
#include "report_html/html_util.h"

#include "reservoir/replay/frame_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>

namespace reservoir::replay::html {

__extension__ using Int128 = __int128;

namespace {

// Whether `out` ends in "http" or "https" (any case): the ':' that would follow makes a URL.
bool endsInScheme(std::string_view out) {
  auto ends = [&](std::string_view word) {
    if (out.size() < word.size()) return false;
    for (std::size_t i = 0; i < word.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(out[out.size() - word.size() + i])) != word[i]) return false;
    return true;
  };
  return ends("http") || ends("https");
}

}  // namespace

std::string esc(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case ':': out += text.substr(i + 1, 2) == "//" || endsInScheme(out) ? "&#58;" : ":"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t')
          out += ' ';  // control characters have no place in a page
        else
          out += c;
    }
  }
  return out;
}

std::string scriptJson(const nlohmann::json& j) {
  const std::string text = j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  for (char c : text) {
    if (c == '/')
      out += "\\/";
    else if (c == ':' && endsInScheme(out))  // only inside strings: JSON's own colons follow a quote
      out += "\\u003a";
    else if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

nlohmann::json geometryJson() {
  using G = Geometry;
  return {{"w", G::kWidth}, {"h", G::kHeight}, {"x0", G::kX0}, {"x1", G::kX1}, {"y0", G::kY0}, {"y1", G::kY1}};
}

std::string_view variantColor(std::size_t v) {
  // Okabe-Ito, told apart with colour-blindness too; the recording in grey.
  static constexpr std::string_view kColors[] = {"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#d55e00", "#56b4e9"};
  if (v == 0) return "#555555";
  return kColors[(v - 1) % std::size(kColors)];
}

std::string swatch(std::size_t v) {
  return fmt::format(
      "<svg width=\"12\" height=\"12\" viewBox=\"0 0 12 12\" aria-hidden=\"true\"><rect width=\"12\" height=\"12\" "
      "fill=\"{}\"/></svg>",
      variantColor(v));
}

std::string tenths(std::int64_t t) {
  const std::int64_t whole = t >= 0 ? t / 10 : -((-t + 9) / 10);
  const std::int64_t frac = t - whole * 10;
  return frac ? fmt::format("{}.{}", whole, frac) : fmt::format("{}", whole);
}

namespace {

std::int64_t xTenths(std::size_t m, std::size_t count) {
  return std::int64_t{Geometry::kX0} * 10 +
         static_cast<std::int64_t>(m * Geometry::kPlotWidth * 10 / std::max<std::size_t>(count, 1));
}

}  // namespace

std::int64_t yTenths(std::int64_t v, std::int64_t ymax) {
  const auto scaled = static_cast<Int128>(v) * (Geometry::kY1 - Geometry::kY0) * 10 / std::max<std::int64_t>(ymax, 1);
  return std::int64_t{Geometry::kY1} * 10 - static_cast<std::int64_t>(scaled);
}

std::int64_t xTenthsAt(std::int64_t p, std::int64_t p0, std::int64_t p1) {
  const auto scaled = static_cast<Int128>(p - p0) * Geometry::kPlotWidth * 10 / std::max<std::int64_t>(p1 - p0, 1);
  return std::int64_t{Geometry::kX0} * 10 + static_cast<std::int64_t>(scaled);
}

std::string bandPath(std::span<const std::int64_t> mins, std::span<const std::int64_t> maxs, std::size_t c0,
                     std::size_t c1, std::int64_t ymax) {
  if (c1 <= c0) return {};
  const std::size_t nv = c1 - c0, count = std::min<std::size_t>(nv, Geometry::kPlotWidth);
  std::vector<std::int64_t> upper(count), lower(count);
  for (std::size_t m = 0; m < count; ++m) {
    const std::size_t lo = c0 + m * nv / count, hi = c0 + (m + 1) * nv / count;
    std::int64_t a = std::numeric_limits<std::int64_t>::max(), b = std::numeric_limits<std::int64_t>::min();
    for (std::size_t c = lo; c < hi; ++c) {
      a = std::min(a, mins[c]);
      b = std::max(b, maxs[c]);
    }
    lower[m] = yTenths(a, ymax);
    upper[m] = yTenths(b, ymax);
  }
  std::string d = "M" + tenths(xTenths(0, count)) + " " + tenths(upper[0]);
  for (std::size_t m = 1; m < count; ++m)
    if (upper[m] != upper[m - 1]) d += "H" + tenths(xTenths(m, count)) + "V" + tenths(upper[m]);
  d += "H" + tenths(xTenths(count, count)) + "V" + tenths(lower[count - 1]);
  for (std::size_t m = count - 1; m > 0; --m)
    if (lower[m - 1] != lower[m]) d += "H" + tenths(xTenths(m, count)) + "V" + tenths(lower[m - 1]);
  return d + "H" + tenths(xTenths(0, count)) + "Z";
}

std::int64_t niceStep(double raw) {
  if (raw <= 1) return 1;
  std::int64_t p = 1;
  while (static_cast<double>(p) * 10 <= raw) p *= 10;
  for (std::int64_t k : {1, 2, 5})
    if (static_cast<double>(k * p) >= raw) return k * p;
  return 10 * p;
}

std::string tickLabel(const CurveAxis& axis, std::int64_t position, std::int64_t step) {
  if (axis.kind == CurveAxis::Kind::kEvents) return fmt::format("{}", position);
  int decimals = 0;
  for (std::int64_t s = 1000000; s > step && decimals < 6; s /= 10) ++decimals;
  return fmt::format("{:.{}f} s", static_cast<double>(position - axis.begin) / 1e6, decimals);
}

std::string stackList(const traces::Snapshot& snap, StackId stack, std::size_t max_frames) {
  const auto frames = snap.stack(stack);
  if (frames.empty()) return "<p class=\"note\">(no frames recorded)</p>";
  std::string out = "<ol class=\"stack\">";
  for (std::size_t i = 0; i < frames.size() && i < max_frames; ++i) {
    const traces::Frame& f = snap.frames[frames[i].value()];
    const std::string_view file = snap.str(f.filename);
    out += fmt::format("<li>{} <span class=\"note\" title=\"{}:{}\">{}:{}</span></li>", esc(snap.str(f.name)),
                       esc(file), f.line, esc(shortFramePath(file)), f.line);
  }
  if (frames.size() > max_frames) out += fmt::format("<li class=\"note\">... {} more</li>", frames.size() - max_frames);
  return out + "</ol>";
}

}  // namespace reservoir::replay::html
