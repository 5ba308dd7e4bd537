// The report as GitHub-flavoured Markdown for a pull-request comment (report.h): the verdict line,
// one row per variant and rank, one line per variant's verdict.
#include <fmt/format.h>

#include <filesystem>
#include <set>

#include "report/report_internal.h"
#include "reservoir/replay/report_text.h"

namespace reservoir::replay {
namespace {

// Text that Markdown shows as written, in a table cell or a line.
std::string md(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
    } else if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";  // no HTML: GitHub would read a tag
    } else if (std::string_view("\\`*_[]|~").find(c) != std::string_view::npos) {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
  }
  return out;
}

// Each rank by its file name, or by its path where two share a name.
std::vector<std::string> rankNames(const Report& report) {
  std::vector<std::string> names, paths;
  for (const auto& r : report.ranks) {
    names.push_back(std::filesystem::path(r.trace.path).filename().string());
    paths.push_back(r.trace.path);
  }
  const std::set<std::string> distinct(names.begin(), names.end());
  return distinct.size() == names.size() ? names : paths;
}

std::string header(const Report& report, bool ranks) {
  std::string h = "| variant |";
  std::string rule = "|---|";
  if (ranks) {
    h += " rank |";
    rule += "---|";
  }
  for (const auto& p : report.probes) {
    h += " reserved " + md(describePoint(p)) + " |";
    rule += "--:|";
  }
  for (const auto& d : report.demands) {
    h += " demand " + md(d) + " |";
    rule += "---|";
  }
  h += " peak allocated | peak reserved |\n";
  rule += "--:|--:|\n";
  return h + rule;
}

std::string rowLine(const Report& report, const ReportRow& row, const std::vector<std::string>& names, bool ranks) {
  const bool recording = row.variant == 0;
  std::string line = "| " + md(report.variants[row.variant].name) + " |";
  if (ranks) line += " " + md(names[row.rank]) + (row.worst ? " (worst)" : "") + " |";
  for (std::size_t i = 0; i < row.probes.size(); ++i)
    line += " " + detail::probeCellWords(row.probes[i], row.probe_change[i], recording) + " |";
  for (const auto& d : row.demands) line += " " + detail::demandCellWords(d) + " |";
  line +=
      " " + detail::withChangeWords(detail::sizeWords(row.peak_allocated), row.peak_allocated_change, recording) + " |";
  return line + " " + detail::peakCellWords(row) + " |\n";
}

std::string footer(const Report& report, std::size_t max_lines) {
  std::string out = "\n";
  for (std::size_t v = 1; v < report.variants.size() && v <= max_lines; ++v)
    out += fmt::format("- **{}**: {}\n", md(report.variants[v].name), md(report.variants[v].verdict));
  if (report.variants.size() - 1 > max_lines)
    out += fmt::format("- {} more variants: see the HTML report\n", report.variants.size() - 1 - max_lines);
  out += fmt::format(
      "\n<sub>reservoir report: {} trace{}; sizes as PyTorch prints them; changes against the recording on the same "
      "rank.</sub>\n",
      report.ranks.size(), report.ranks.size() == 1 ? "" : "s");
  return out;
}

// `all_ranks`: every rank's row, else each variant's worst rank only; at most `max_rows` rows and
// `max_lines` verdict lines.
std::string render(const Report& report, bool all_ranks, std::size_t max_rows, std::size_t max_lines) {
  const bool ranks = report.ranks.size() > 1;
  const auto names = rankNames(report);
  std::string out = "**Memory:** " + md(report.verdict) + "\n\n" + header(report, ranks);
  std::size_t shown = 0, rows = 0;
  for (const ReportRow& row : reportTable(report)) {
    if (!all_ranks && ranks && !row.worst) continue;
    ++rows;
    if (shown >= max_rows) continue;
    out += rowLine(report, row, names, ranks);
    ++shown;
  }
  if (!all_ranks && ranks) out += "\n*Each variant's worst rank; every rank's row is in the HTML report.*\n";
  if (shown < rows) out += fmt::format("\n*{} more rows are in the HTML report.*\n", rows - shown);
  return out + footer(report, max_lines);
}

}  // namespace

std::string reportMarkdown(const Report& report) {
  std::string out = render(report, true, SIZE_MAX, SIZE_MAX);
  if (out.size() <= kMarkdownLimit) return out;
  out = render(report, false, SIZE_MAX, SIZE_MAX);
  // Still too long: fewer rows and verdict lines, until it fits.
  for (std::size_t n = report.variants.size(); out.size() > kMarkdownLimit && n > 0;) {
    n /= 2;
    out = render(report, false, n, n);
  }
  if (out.size() <= kMarkdownLimit) return out;
  return "**Memory:** " + md(report.verdict.substr(0, 4096)) +
         "\n\n*The table is too long for a comment: see the HTML report.*\n";
}

}  // namespace reservoir::replay
