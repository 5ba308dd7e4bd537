// The report as one self-contained page (report.h): inline style sheet and script, SVG curves,
// nothing fetched. Sections in the order the readers ask: the verdict, the curves, the
// peak, what pins it, the sweep, the ranks, the settings and facts.
#include <fmt/format.h>

#include "report/report_internal.h"
#include "report_html/html_util.h"

namespace reservoir::replay::html {
namespace {

inline constexpr std::size_t kChartedRanks = 8;

// The ranks drawn: the worst first, then the others in order, at most kChartedRanks.
std::vector<std::size_t> chartedRanks(const Report& report) {
  std::vector<std::size_t> out{report.worst_rank};
  for (std::size_t r = 0; r < report.ranks.size() && out.size() < kChartedRanks; ++r)
    if (r != report.worst_rank) out.push_back(r);
  return out;
}

std::string legend(const Report& report) {
  std::string out = "<p class=\"legend\">";
  for (std::size_t v = 0; v < report.variants.size(); ++v)
    out += "<span>" + swatch(v) + " " + esc(report.variants[v].name) + "</span>";
  return out +
         "</p><p class=\"note\">Reserved: the solid band (its least and largest value per pixel column); allocated: "
         "the "
         "dashed one. A dot marks each run's peak reserved, a thick line the rise that made it, ticks at the top the "
         "edits, ticks at the bottom the annotations (hover them for names). Hover the curves for values; drag to "
         "zoom, double-click to go back.</p>";
}

std::string curvesSection(const Report& report, nlohmann::json& charts, std::int64_t& unit) {
  const auto ranks = chartedRanks(report);
  unit = curveUnit(report, ranks);
  std::string out = "<section id=\"curves\"><h2>Reserved and allocated</h2>" + legend(report);
  for (std::size_t r : ranks) out += rankCharts(report, r, unit, charts);
  if (report.ranks.size() > ranks.size())
    out +=
        fmt::format("<p class=\"note\">{} more ranks are in the tables below (curves for the worst and {} others).</p>",
                    report.ranks.size() - ranks.size(), ranks.size() - 1);
  for (std::size_t r : ranks) {
    const ReportRank& rank = report.ranks[r];
    if (rank.annotation_count > rank.annotations.size())
      out += fmt::format("<p class=\"note\">{}: {} annotations, {} marked (evenly spread).</p>", esc(rank.trace.path),
                         rank.annotation_count, rank.annotations.size());
    for (std::size_t v = 1; v < rank.runs.size(); ++v)
      if (rank.runs[v].edit_points > rank.runs[v].edit_marks.size())
        out += fmt::format("<p class=\"note\">{} on {}: its edits apply at {} points, the first {} marked.</p>",
                           esc(report.variants[v].name), esc(rank.trace.path), rank.runs[v].edit_points,
                           rank.runs[v].edit_marks.size());
  }
  return out + "</section>";
}

std::string title(const Report& report) {
  if (report.ranks.empty()) return "Memory report";
  const std::string& path = report.ranks[0].trace.path;
  return report.ranks.size() == 1 ? "Memory report: " + path
                                  : fmt::format("Memory report: {} and {} more", path, report.ranks.size() - 1);
}

}  // namespace

}  // namespace reservoir::replay::html

namespace reservoir::replay {

std::string reportHtml(const Report& report) {
  using namespace html;
  nlohmann::json charts = nlohmann::json::object();
  std::int64_t unit = 1;
  const std::string curves = curvesSection(report, charts, unit);
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
      "content=\"width=device-width, initial-scale=1\"><meta name=\"generator\" content=\"reservoir "
      "report\"><title>" +
      esc(title(report)) + "</title><style>" + std::string(pageCss()) + "</style></head><body><main>";
  out += "<h1>" + esc(title(report)) + "</h1>";
  out += fmt::format(
      "<p class=\"meta\">{} trace{}, {} run{} each (the recording{}); replayed through Reservoir's model "
      "of PyTorch's CUDA caching allocator.</p>",
      report.ranks.size(), report.ranks.size() == 1 ? "" : "s", report.variants.size(),
      report.variants.size() == 1 ? "" : "s", report.variants.size() > 1 ? " and its variants" : "");
  out += verdictSection(report) + curves + peakSection(report) + pinsSection(report) + sweepSection(report) +
         ranksSection(report) + factsSection(report);
  const nlohmann::json data = {{"geometry", geometryJson()}, {"unit", unit}, {"charts", std::move(charts)}};
  out += "<div id=\"tip\" hidden></div><script type=\"application/json\" id=\"report-data\">" + scriptJson(data) +
         "</script><script>" + std::string(pageScript()) + "</script></main></body></html>\n";
  return out;
}

}  // namespace reservoir::replay
