// The report page's last sections: the sweep, the ranks, the settings, trace facts and anomalies.
#include <fmt/format.h>

#include <algorithm>

#include "report/report_internal.h"
#include "report_html/html_util.h"
#include "reservoir/replay/report_text.h"

namespace reservoir::replay::html {
namespace {

std::string savingWords(const SweepCandidate& c) {
  if (c.saving > 0) return "saves " + detail::sizeWords(c.saving);
  if (c.saving == 0) return "saves nothing";
  return "costs " + detail::sizeWords(-c.saving) + " more";
}

std::string callsWords(const SweepCandidate& c) {
  if (c.settings) return "no empty_cache";
  std::string out = fmt::format("{} call{}", c.empty_cache_calls, c.empty_cache_calls == 1 ? "" : "s");
  if (c.calls_per_step) out += " (" + perStepWords(*c.calls_per_step) + ")";
  return out;
}

std::string candidateRow(const SweepCandidate& c, std::size_t i) {
  const std::string id = fmt::format("edits{}", i + 1);
  std::string flags = detail::shellLine(c.edits);
  return fmt::format(
      "<tr{}><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}{}{}</td><td>{}</td><td class=\"num\">{}</td>"
      "<td>{}</td><td><code class=\"copy\" id=\"{}\">{}</code><button class=\"copy\" data-for=\"{}\" "
      "type=\"button\">copy</button></td></tr>",
      c.pareto ? " class=\"pareto\"" : "", i + 1, esc(savingWords(c)), esc(c.description),
      c.within_cap ? "" : " (over the call cap)", c.oom ? " (OUT OF MEMORY)" : "", esc(callsWords(c)),
      esc(candidatePriceWords(c)), c.pareto ? "yes" : "", id, esc(flags), id);
}

std::string settingsRow(const Report& report, std::size_t v) {
  const std::size_t r = report.variants[v].worst_rank;
  const WhatIfReport& rep = report.ranks[r].runs[v].report;
  const EditedRun& e = rep.edited_run;
  const std::string capacity =
      e.capacity ? fmt::format("{} ({})", detail::sizeWords(static_cast<std::int64_t>(*e.capacity)), e.capacity_source)
                 : e.capacity_source;
  return fmt::format("<tr><td>{} {}</td><td><code>{}</code> ({})</td><td>{}</td><td>{} ({})</td></tr>", swatch(v),
                     esc(report.variants[v].name),
                     esc(rep.settings_whatif.empty() ? std::string("(defaults)") : rep.settings_whatif),
                     esc(e.config_source), esc(capacity), e.fraction, esc(e.fraction_source));
}

std::string factsRow(const ReportFacts& f) {
  return fmt::format(
      "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{:.6f} "
      "s</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td><code>{}</code></td><td>{}"
      "</td></tr>",
      esc(f.path), f.device, f.events, f.complete ? "complete" : "a window (ring buffer)",
      static_cast<double>(f.last_time_us - f.first_time_us) / 1e6, f.allocations, f.frames, f.annotations,
      esc(f.recorded_settings.empty() ? std::string("(defaults)") : f.recorded_settings),
      f.divergence_event ? fmt::format("departs from the recording at event {} (run check)", *f.divergence_event)
      : f.layout_exact   ? std::string("exact event by event")
                         : std::string("exact event by event; the final segments differ (run check)"));
}

std::string anomaliesOf(const ReportRank& rank, bool several) {
  std::string out = several ? "<h3>" + esc(rank.trace.path) + "</h3>" : "";
  if (rank.facts.anomalies.empty()) return out + "<p>No anomalies.</p>";
  out += "<table><tr><th>anomaly</th><th>severity</th><th class=\"num\">count</th><th>what it is</th></tr>";
  for (const auto& a : rank.facts.anomalies)
    out += fmt::format("<tr><td><code>{}</code></td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>", esc(a.name),
                       esc(a.severity), a.count, esc(a.description));
  return out + "</table>";
}

std::string notes(const Report& report) {
  std::vector<std::string> all;
  for (const auto& rank : report.ranks)
    for (const auto& run : rank.runs)
      for (const auto& n : run.report.notes) {
        const std::string line = report.ranks.size() > 1 ? rank.trace.path + ": " + n : n;
        if (std::find(all.begin(), all.end(), line) == all.end()) all.push_back(line);
      }
  if (all.empty()) return {};
  std::string out = "<h3>Notes</h3><ul>";
  for (const auto& n : all) out += "<li>" + esc(n) + "</li>";
  return out + "</ul>";
}

}  // namespace

std::string sweepSection(const Report& report) {
  if (!report.sweep) return {};
  const SweepReport& s = *report.sweep;
  std::string out = "<section id=\"sweep\"><h2>Where empty_cache belongs: the sweep</h2>";
  out += fmt::format(
      "<p>Minimizing {}: the baseline {} (run peak {}); {} candidates replayed{}{}. {}.</p>", esc(s.objective),
      esc(detail::sizeWords(s.baseline_objective)), esc(detail::sizeWords(s.baseline_peak_reserved)), s.evaluated,
      report.ranks.size() > 1 ? fmt::format(", each scored on its worst of {} ranks", report.ranks.size())
                              : std::string(),
      s.cancelled ? " (cancelled: the rest were not replayed)" : "",
      esc(s.max_calls
              ? fmt::format("empty_cache calls allowed: at most {} in the trace, {}", *s.max_calls, s.max_calls_source)
              : "empty_cache calls allowed: " + s.max_calls_source));
  out +=
      "<table id=\"sweep-table\"><tr><th class=\"num\">#</th><th class=\"num\">saving</th><th>candidate</th><th>"
      "empty_cache</th><th class=\"num\">price</th><th>Pareto</th><th>edits (for whatif, gate or --variant)</th></tr>";
  for (std::size_t i = 0; i < s.candidates.size() && i < report.sweep_top; ++i) out += candidateRow(s.candidates[i], i);
  out += "</table>";
  if (!s.pareto.empty()) {
    out += "<h3>Saving against price: the Pareto front, cheapest first</h3><ol>";
    for (std::size_t i : s.pareto) {
      const auto& c = s.candidates[i];
      out += fmt::format("<li>{} for {}: {} (#{}) <code>{}</code></li>", esc(savingWords(c)),
                         esc(priceText(c.price_seconds)), esc(c.description), i + 1, esc(detail::shellLine(c.edits)));
    }
    out += "</ol>";
  }
  return out + "</section>";
}

std::string ranksSection(const Report& report) {
  if (report.ranks.size() < 2) return {};
  const ReportRank& worst = report.ranks[report.worst_rank];
  std::string out = fmt::format(
      "<section id=\"ranks\"><h2>Ranks</h2><p>The worst rank: <b>{}</b> (the largest peak reserved of any "
      "run).</p><table "
      "id=\"rank-table\"><tr><th>rank</th>",
      esc(worst.trace.path));
  for (std::size_t v = 0; v < report.variants.size(); ++v)
    out += "<th class=\"num\">" + swatch(v) + " " + esc(report.variants[v].name) + ": peak reserved</th>";
  out += "</tr>";
  for (std::size_t r = 0; r < report.ranks.size(); ++r) {
    out += r == report.worst_rank ? "<tr class=\"worst\">" : "<tr>";
    out += "<td>" + esc(report.ranks[r].trace.path) + (r == report.worst_rank ? " (worst)" : "") + "</td>";
    for (std::size_t v = 0; v < report.variants.size(); ++v) {
      const std::int64_t peak = report.ranks[r].runs[v].run().peak_reserved.bytes;
      out += fmt::format("<td class=\"num\" data-bytes=\"{}\">{}</td>", peak, esc(detail::sizeWords(peak)));
    }
    out += "</tr>";
  }
  return out + "</table></section>";
}

std::string factsSection(const Report& report) {
  std::string out =
      "<section id=\"facts\"><h2>Settings, trace facts and anomalies</h2><h3>The device of each run</h3><table><tr><th>"
      "run</th><th>allocator settings</th><th>capacity</th><th>memory fraction</th></tr>";
  for (std::size_t v = 0; v < report.variants.size(); ++v) out += settingsRow(report, v);
  out +=
      "</table><h3>Traces</h3><table><tr><th>trace</th><th class=\"num\">device</th><th class=\"num\">events</th><th>"
      "window</th><th class=\"num\">time span</th><th class=\"num\">allocations</th><th class=\"num\">frames</th><th "
      "class=\"num\">annotations</th><th>recorded settings</th><th>model</th></tr>";
  for (const auto& rank : report.ranks) out += factsRow(rank.facts);
  out += "</table><h3>Anomalies</h3>";
  for (const auto& rank : report.ranks) out += anomaliesOf(rank, report.ranks.size() > 1);
  return out + notes(report) + "</section>";
}

}  // namespace reservoir::replay::html
