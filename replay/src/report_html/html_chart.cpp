// The report's curves: one chart per axis (events, time) of a rank, every variant's reserved and
// allocated bands, the peaks and the rises that made them, the edits, the annotations. Drawn as
// SVG when the page is written (readable without the script, and printed); the data beside it
// lets report.js redraw a zoomed range and show values under the pointer.
#include <fmt/format.h>

#include <algorithm>

#include "report/report_internal.h"
#include "report_html/html_util.h"

namespace reservoir::replay::html {
namespace {

using G = Geometry;

bool byEvents(const CurveAxis& axis) { return axis.kind == CurveAxis::Kind::kEvents; }

const Curve& reservedOf(const ReportRun& run, const CurveAxis& axis) {
  return byEvents(axis) ? run.by_event.reserved : run.by_time.reserved;
}
const Curve& allocatedOf(const ReportRun& run, const CurveAxis& axis) {
  return byEvents(axis) ? run.by_event.allocated : run.by_time.allocated;
}

std::int64_t chartMax(const ReportRank& rank, const CurveAxis& axis, std::int64_t unit) {
  std::int64_t most = 0;
  for (const auto& run : rank.runs)
    for (const Curve* c : {&reservedOf(run, axis), &allocatedOf(run, axis)})
      for (std::int64_t v : c->max) most = std::max(most, v);
  const std::int64_t units = (most + unit - 1) / unit;
  return std::max<std::int64_t>(1, units + units / 20 + 1);  // 5% headroom
}

std::string yTicks(std::int64_t ymax, std::int64_t unit) {
  const std::int64_t top = ymax * unit;
  std::int64_t base = 1;
  for (std::int64_t u : {std::int64_t{1} << 30, std::int64_t{1} << 20, std::int64_t{1} << 10})
    if (top / 4 >= u) {
      base = u;
      break;
    }
  const std::int64_t step = niceStep(static_cast<double>(top) / 4.0 / static_cast<double>(base)) * base;
  std::string out = "<g font-size=\"11\" fill=\"#444\">";
  for (std::int64_t v = 0; v <= top; v += step) {
    const std::string y = tenths(yTenths(v / unit, ymax));
    out += fmt::format(
        "<path d=\"M{} {}H{}\" stroke=\"{}\"/><text x=\"{}\" y=\"{}\" dy=\"4\" text-anchor=\"end\">{}</text>", G::kX0,
        y, G::kX1, v == 0 ? "#999" : "#ececec", G::kX0 - 6, y, detail::sizeWords(v));
  }
  return out + "</g>";
}

std::string xTicks(const CurveAxis& axis) {
  const std::int64_t p0 = axis.begin, p1 = axis.end;
  const std::int64_t origin = byEvents(axis) ? 0 : axis.begin;
  const std::int64_t rel0 = p0 - origin, span = p1 - p0;
  const std::int64_t step = niceStep(static_cast<double>(span) / 6.0);
  std::string out = "<g class=\"xt\">";
  for (std::int64_t t = (rel0 + step - 1) / step * step; t < rel0 + span; t += step) {
    const std::int64_t pos = t + origin;
    const std::string x = tenths(xTenthsAt(pos, p0, p1));
    out += fmt::format(
        "<path d=\"M{} {}V{}\" stroke=\"#e6e6e6\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\" "
        "fill=\"#444\">{}</text>",
        x, G::kY0, G::kY1 + 4, x, G::kY1 + 16, esc(tickLabel(axis, pos, step)));
  }
  return out + "</g>";
}

// A mark at `position` (edits: one row of the strip above the plot per variant): its path with '#' for its x (report.js
// moves it when zoomed).
std::string mark(const CurveAxis& axis, std::int64_t position, const std::string& templ, const std::string& attrs,
                 const std::string& title) {
  std::string d = templ;
  const std::string x = tenths(xTenthsAt(position, axis.begin, axis.end));
  for (auto at = d.find('#'); at != std::string::npos; at = d.find('#')) d.replace(at, 1, x);
  return fmt::format("<path d=\"{}\" data-d=\"{}\" data-p=\"{}\" {}><title>{}</title></path>", d, templ, position,
                     attrs, esc(title));
}

std::string annotationMarks(const ReportRank& rank, const CurveAxis& axis) {
  std::string out = "<g>";
  for (const auto& m : rank.annotations) {
    const bool start = m.kind == ReportMark::Kind::kAnnotationStart;
    const std::int64_t p = byEvents(axis) ? m.event : m.time_us;
    out += mark(axis, p, start ? fmt::format("M# {}v9", G::kY1 + 22) : fmt::format("M# {}v5", G::kY1 + 24),
                "stroke=\"#8a8a8a\"", fmt::format("{} {} (event {})", m.label, start ? "starts" : "ends", m.event));
  }
  return out + "</g>";
}

std::int64_t positionOf(const CurveAxis& axis, std::uint32_t event, std::int64_t time_us) {
  return byEvents(axis) ? event : time_us;
}

std::string runMarks(const Report& report, const ReportRank& rank, std::size_t v, const CurveAxis& axis,
                     std::int64_t ymax, std::int64_t unit) {
  const ReportRun& run = rank.runs[v];
  const std::string& name = report.variants[v].name;
  const std::string color(variantColor(v));
  std::string out;
  for (const auto& m : run.edit_marks)
    out += mark(axis, positionOf(axis, m.event, m.time_us), fmt::format("M# {}v4", 1 + 4 * ((v - 1) % 5)),
                "stroke=\"" + color + "\" stroke-width=\"2\"",
                fmt::format("{}: {} (before event {})", name, m.label, m.event));
  const PeakOrigin& o = run.reserved_origin;
  if (!o.known) return out;
  // The climb that made the peak, drawn where it ends, from the value before it to the value after.
  const PeakClimb& climb = o.climb;
  const std::string where = climb.oneOp()
                                ? fmt::format("at event {}", climb.last.event)
                                : fmt::format("over events {}-{} ({} steps)", climb.first.event, climb.last.event,
                                              climb.rising_ops);
  if (climb.rise() > 0)
    out += mark(axis, positionOf(axis, climb.last.event, climb.last.time_us),
                fmt::format("M# {}V{}", tenths(yTenths(climb.first.before / unit, ymax)),
                            tenths(yTenths(climb.last.after / unit, ymax))),
                "stroke=\"" + color + "\" stroke-width=\"3.5\" stroke-opacity=\"0.75\"",
                fmt::format("{}: the rise that made the peak: {} {} ({} still held at the peak)", name,
                            detail::changeWords(climb.rise()), where, detail::sizeWords(climb.held)));
  const std::string y = tenths(yTenths(o.peak / unit, ymax));
  out += mark(axis, positionOf(axis, o.set.event, o.set.time_us),
              fmt::format("M# {}m-4 0a4 4 0 1 0 8 0a4 4 0 1 0 -8 0", y),
              "fill=\"" + color + "\" stroke=\"#fff\" stroke-width=\"1\"",
              fmt::format("{}: peak reserved {} at event {}", name, detail::sizeWords(o.peak), o.set.event));
  return out;
}

std::vector<std::int64_t> inUnits(const std::vector<std::int64_t>& v, std::int64_t unit) {
  std::vector<std::int64_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = v[i] / unit;
  return out;
}

std::string bands(const ReportRank& rank, const CurveAxis& axis, std::int64_t ymax, std::int64_t unit,
                  nlohmann::json& runs) {
  std::string out;
  for (std::size_t v = 0; v < rank.runs.size(); ++v) {
    const auto r = inUnits(reservedOf(rank.runs[v], axis).min, unit),
               R = inUnits(reservedOf(rank.runs[v], axis).max, unit);
    const auto a = inUnits(allocatedOf(rank.runs[v], axis).min, unit),
               A = inUnits(allocatedOf(rank.runs[v], axis).max, unit);
    const std::string color(variantColor(v));
    // Later runs are drawn over earlier ones, narrower: where curves coincide, each stays visible.
    const double under = static_cast<double>(std::min<std::size_t>(rank.runs.size() - 1 - v, 4));
    out += fmt::format(
        "<path class=\"band\" data-run=\"{}\" data-q=\"a\" d=\"{}\" fill=\"{}\" fill-opacity=\"0.06\" stroke=\"{}\" "
        "stroke-width=\"{:.1f}\" stroke-dasharray=\"5 3\"/>",
        v, bandPath(a, A, 0, axis.columns, ymax), color, color, 1.0 + 0.7 * under);
    out += fmt::format(
        "<path class=\"band\" data-run=\"{}\" data-q=\"r\" d=\"{}\" fill=\"{}\" fill-opacity=\"0.16\" stroke=\"{}\" "
        "stroke-width=\"{:.1f}\" stroke-linejoin=\"round\"/>",
        v, bandPath(r, R, 0, axis.columns, ymax), color, color, 1.4 + 1.1 * under);
    runs.push_back({{"r", r}, {"R", R}, {"a", a}, {"A", A}});
  }
  return out;
}

std::string chart(const Report& report, std::size_t r, const CurveAxis& axis, std::int64_t unit,
                  nlohmann::json& charts) {
  const ReportRank& rank = report.ranks[r];
  const std::string id = fmt::format("c{}{}", r, byEvents(axis) ? 'e' : 't');
  const std::string what = byEvents(axis) ? "events" : "time";
  std::string out = fmt::format(
      "<figure><figcaption>{} (device {}), over {}<button class=\"reset\" data-chart=\"{}\" hidden>reset "
      "zoom</button></figcaption>",
      esc(rank.trace.path), rank.facts.device, what, id);
  if (axis.columns == 0) return out + "<p class=\"note\">no events to draw</p></figure>";
  const std::int64_t ymax = chartMax(rank, axis, unit);
  nlohmann::json runs = nlohmann::json::array();
  out += fmt::format(
      "<svg class=\"chart\" id=\"{}\" viewBox=\"0 0 {} {}\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
      "aria-label=\"reserved and allocated over {} for {} runs\">",
      id, G::kWidth, G::kHeight, what, rank.runs.size());
  out += yTicks(ymax, unit) + xTicks(axis) + bands(rank, axis, ymax, unit, runs);
  out += "<g class=\"marks\">" + annotationMarks(rank, axis);
  for (std::size_t v = 0; v < rank.runs.size(); ++v) out += runMarks(report, rank, v, axis, ymax, unit);
  out += fmt::format(
      "</g><path class=\"guide\" d=\"M0 0\" stroke=\"#333\" stroke-width=\"0.8\" visibility=\"hidden\"/><rect "
      "class=\"sel\" x=\"0\" y=\"{}\" width=\"0\" height=\"{}\" fill=\"#0072b2\" fill-opacity=\"0.12\" "
      "visibility=\"hidden\"/></svg></figure>",
      G::kY0, G::kY1 - G::kY0);
  for (std::size_t v = 0; v < runs.size(); ++v) runs[v]["n"] = report.variants[v].name;
  charts[id] = {{"axis", {{"kind", what}, {"begin", axis.begin}, {"end", axis.end}, {"columns", axis.columns}}},
                {"ymax", ymax},
                {"runs", std::move(runs)}};
  return out;
}

}  // namespace

std::int64_t curveUnit(const Report& report, const std::vector<std::size_t>& ranks) {
  constexpr std::int64_t kUnit = 512;
  for (std::size_t r : ranks)
    for (const auto& run : report.ranks[r].runs)
      for (const RunCurves* c : {&run.by_event, &run.by_time})
        for (const Curve* k : {&c->reserved, &c->allocated})
          for (const auto* v : {&k->min, &k->max})
            if (std::any_of(v->begin(), v->end(), [](std::int64_t x) { return x % kUnit != 0; })) return 1;
  return kUnit;
}

std::string rankCharts(const Report& report, std::size_t r, std::int64_t unit, nlohmann::json& charts) {
  const ReportRank& rank = report.ranks[r];
  return chart(report, r, rank.by_event, unit, charts) + chart(report, r, rank.by_time, unit, charts);
}

}  // namespace reservoir::replay::html
