// The report page's first sections after the curves' data: the verdict with the table, the peak
// and where it came from, what pins the cache there.
#include <fmt/format.h>

#include <algorithm>

#include "report/report_internal.h"
#include "report_html/html_util.h"
#include "reservoir/replay/report_text.h"

namespace reservoir::replay::html {
namespace {

constexpr std::size_t kStacksShown = 5;  // pinning stacks in the page (the JSON has PinLimits::stacks)

std::string variantName(const Report& report, std::size_t v) { return swatch(v) + " " + esc(report.variants[v].name); }

std::string figuresTable(const Report& report) {
  const bool ranks = report.ranks.size() > 1;
  std::string out = "<table id=\"figures\"><tr><th>run</th>";
  if (ranks) out += "<th>rank</th>";
  for (const auto& p : report.probes) out += "<th class=\"num\">reserved " + esc(describePoint(p)) + "</th>";
  for (const auto& d : report.demands) out += "<th>demand " + esc(d) + "</th>";
  out += "<th class=\"num\">peak allocated</th><th class=\"num\">peak reserved</th></tr>";
  for (const ReportRow& row : reportTable(report)) {
    const bool recording = row.variant == 0;
    out += row.worst ? "<tr class=\"worst\">" : "<tr>";
    out += "<td>" + variantName(report, row.variant) + "</td>";
    if (ranks) out += "<td>" + esc(report.ranks[row.rank].trace.path) + (row.worst ? " (worst)" : "") + "</td>";
    for (std::size_t i = 0; i < row.probes.size(); ++i)
      out += fmt::format("<td class=\"num\" data-bytes=\"{}\">{}</td>",
                         row.probes[i].occurrences ? std::to_string(row.probes[i].reserved) : "",
                         esc(detail::probeCellWords(row.probes[i], row.probe_change[i], recording)));
    for (const auto& d : row.demands) out += "<td>" + esc(detail::demandCellWords(d)) + "</td>";
    out += fmt::format(
        "<td class=\"num\" data-bytes=\"{}\">{}</td>", row.peak_allocated,
        esc(detail::withChangeWords(detail::sizeWords(row.peak_allocated), row.peak_allocated_change, recording)));
    out += fmt::format("<td class=\"num\" data-bytes=\"{}\">{}</td></tr>", row.peak_reserved,
                       esc(detail::peakCellWords(row)));
  }
  return out + "</table>";
}

std::string onRank(const Report& report, std::size_t rank) {
  return report.ranks.size() > 1 ? " <span class=\"note\">on " + esc(report.ranks[rank].trace.path) + "</span>" : "";
}

std::string seconds(const ReportRank& rank, std::int64_t time_us) {
  return fmt::format("{:.6f} s", static_cast<double>(time_us - rank.facts.first_time_us) / 1e6);
}

std::string opWords(const PeakStep& s) {
  switch (s.kind) {
    case OpKind::kMalloc: return "a malloc of " + detail::sizeWords(static_cast<std::int64_t>(s.request));
    case OpKind::kFree: return "a free";
    case OpKind::kEmptyCache: return "an empty_cache";
  }
  return "an op";
}

bool sameStep(const PeakStep& a, const PeakStep& b) {
  return a.op == b.op && a.before == b.before && a.after == b.after && a.held == b.held;
}

// Whether run `v` of its worst rank has the recording's peak there, made the same way.
bool sameOrigin(const Report& report, std::size_t v) {
  const std::size_t r = report.variants[v].worst_rank;
  const ReportRun& a = report.ranks[r].runs[v];
  const ReportRun& b = report.ranks[r].runs[0];
  const auto same = [](const PeakOrigin& x, const PeakOrigin& y) {
    return x.known == y.known && x.peak == y.peak && sameStep(x.set, y.set) && sameStep(x.largest_rise, y.largest_rise) &&
           sameStep(x.climb.first, y.climb.first) && sameStep(x.climb.last, y.climb.last) && x.climb.held == y.climb.held;
  };
  return v > 0 && same(a.reserved_origin, b.reserved_origin) && same(a.allocated_origin, b.allocated_origin);
}

bool samePins(const Report& report, std::size_t v) {
  const std::size_t r = report.variants[v].worst_rank;
  const auto& a = report.ranks[r].runs[v].pins;
  const auto& b = report.ranks[r].runs[0].pins;
  if (v == 0 || !a || !b) return false;
  return a->reserved == b->reserved && a->allocated == b->allocated && a->releasable == b->releasable &&
         a->pinned == b->pinned && a->pinned_free == b->pinned_free && a->pinned_segments == b->pinned_segments &&
         a->stacks.size() == b->stacks.size() &&
         std::equal(a->stacks.begin(), a->stacks.end(), b->stacks.begin(), [](const auto& x, const auto& y) {
           return x.stack == y.stack && x.pinned_bytes == y.pinned_bytes && x.live_bytes == y.live_bytes;
         });
}

std::string peakOf(const Report& report, std::size_t v) {
  const std::size_t r = report.variants[v].worst_rank;
  const ReportRank& rank = report.ranks[r];
  const ReportRun& run = rank.runs[v];
  const traces::Snapshot& snap = rank.trace.snap();
  const PeakOrigin& o = run.reserved_origin;
  std::string out = "<h3>" + variantName(report, v) + onRank(report, r) + "</h3>";
  if (!o.known) return out + "<p class=\"note\">no peak: the run has no ops</p>";
  if (sameOrigin(report, v))
    return out + fmt::format("<p>The recording's: <b>{}</b> at event {}, made the same way.</p>",
                             esc(detail::sizeWords(o.peak)), o.set.event);
  out += "<dl class=\"peak\">";
  out += fmt::format("<dt>peak reserved</dt><dd><b>{}</b> at event {} ({})</dd>", esc(detail::sizeWords(o.peak)),
                     o.set.event, seconds(rank, o.set.time_us));
  out += fmt::format("<dt>set by</dt><dd>{} at event {}: reserved {} -&gt; {}{}</dd>", esc(opWords(o.set)), o.set.event,
                     esc(detail::sizeWords(o.set.before)), esc(detail::sizeWords(o.set.after)),
                     stackList(snap, o.set.stack));
  const PeakClimb& climb = o.climb;
  const PeakStep& rise = climb.largest;
  if (o.setByItsClimb())
    out += "<dt>the rise that made it</dt><dd>the same op: its own rise is the largest still held at the peak</dd>";
  else if (climb.oneOp())
    out += fmt::format(
        "<dt>the rise that made it</dt><dd><b>{}</b> at event {} ({}; {}), of which {} is still held at the "
        "peak{}</dd>",
        esc(detail::changeWords(rise.rise())), rise.event, esc(opWords(rise)), seconds(rank, rise.time_us),
        esc(detail::sizeWords(climb.held)), stackList(snap, rise.stack));
  else
    out += fmt::format(
        "<dt>the rise that made it</dt><dd><b>{}</b> over events {}-{} ({} steps; {} to {}): reserved {} -&gt; "
        "{}, of which {} is still held at the peak; its largest step: {} at event {} ({}){}</dd>",
        esc(detail::changeWords(climb.rise())), climb.first.event, climb.last.event, climb.rising_ops,
        seconds(rank, climb.first.time_us), seconds(rank, climb.last.time_us), esc(detail::sizeWords(climb.first.before)),
        esc(detail::sizeWords(climb.last.after)), esc(detail::sizeWords(climb.held)),
        esc(detail::changeWords(rise.rise())), rise.event, esc(opWords(rise)), stackList(snap, rise.stack));
  const PeakOrigin& a = run.allocated_origin;
  if (a.known)
    out += fmt::format("<dt>peak allocated</dt><dd><b>{}</b> at event {}{}</dd>", esc(detail::sizeWords(a.peak)),
                       a.set.event, stackList(snap, a.set.stack));
  return out + "</dl>";
}

std::string pinsOf(const Report& report, std::size_t v) {
  const std::size_t r = report.variants[v].worst_rank;
  const ReportRank& rank = report.ranks[r];
  const ReportRun& run = rank.runs[v];
  std::string out = "<h3>" + variantName(report, v) + onRank(report, r) + "</h3>";
  if (!run.pins) return out + "<p class=\"note\">no peak to analyse</p>";
  const CachePins& p = *run.pins;
  if (samePins(report, v))
    return out + fmt::format("<p>As in the recording: {} stays pinned, {} would be returned.</p>",
                             esc(detail::sizeWords(p.pinned)), esc(detail::sizeWords(p.releasable)));
  using detail::sizeWords;
  out += fmt::format(
      "<p>At the peak reserved (event {}): reserved {}, allocated {}: <b>{} cached</b> (reserved - allocated); an "
      "empty_cache there would return <b>{}</b>; <b>{} stays pinned</b>",
      run.run().peak_reserved.event, esc(sizeWords(p.reserved)), esc(sizeWords(p.allocated)), esc(sizeWords(p.cached)),
      esc(sizeWords(p.releasable)), esc(sizeWords(p.pinned)));
  out += fmt::format(": {} free in {} segment{} that live blocks keep",
                     esc(sizeWords(static_cast<std::int64_t>(p.pinned_free))), p.pinned_segments,
                     p.pinned_segments == 1 ? "" : "s");
  const std::int64_t other = p.pinned - static_cast<std::int64_t>(p.pinned_free);
  if (other != 0)
    out += fmt::format(", and {} of blocks freed but still in use by a stream or of partial expandable pages",
                       esc(sizeWords(other)));
  out += ".</p>";
  if (!p.stacks.empty()) {
    out +=
        "<table><tr><th>allocation stack of the live blocks that pin</th><th class=\"num\">blocks</th><th "
        "class=\"num\">live</th><th class=\"num\">pinned (its share)</th><th class=\"num\">segments</th></tr>";
    for (std::size_t i = 0; i < p.stacks.size() && i < kStacksShown; ++i) {
      const PinningStack& s = p.stacks[i];
      out += fmt::format(
          "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
          "class=\"num\">{}</td></tr>",
          stackList(rank.trace.snap(), s.stack, 4), s.blocks, esc(sizeWords(static_cast<std::int64_t>(s.live_bytes))),
          esc(sizeWords(static_cast<std::int64_t>(s.pinned_bytes))), s.segments);
    }
    out += "</table>";
    const std::size_t shown = std::min(p.stacks.size(), kStacksShown);
    if (p.pinning_stacks > shown)
      out += fmt::format("<p class=\"note\">{} more stacks pin less (the JSON lists {}).</p>", p.pinning_stacks - shown,
                         p.stacks.size());
  }
  if (p.unattributed)
    out += fmt::format("<p class=\"note\">{} of it is in segments whose live blocks have no recorded allocation.</p>",
                       esc(sizeWords(static_cast<std::int64_t>(p.unattributed))));
  return out;
}

}  // namespace

std::string verdictSection(const Report& report) {
  std::string out = "<section id=\"verdict\"><h2>Verdict</h2><p class=\"verdict\" id=\"verdict-text\">" +
                    esc(report.verdict) +
                    "</p><table id=\"variants\"><tr><th>run</th><th>edits</th><th>verdict</th></tr>";
  for (std::size_t v = 0; v < report.variants.size(); ++v)
    out += "<tr><td>" + variantName(report, v) + "</td><td>" + esc(report.variants[v].edits) + "</td><td>" +
           esc(report.variants[v].verdict) + "</td></tr>";
  out += "</table>" + figuresTable(report);
  out +=
      "<p class=\"note\">Sizes as PyTorch prints them; in parentheses, the change against the recording on the "
      "same rank. A point reached several times shows the most reserved there.</p></section>";
  return out;
}

std::string peakSection(const Report& report) {
  std::string out =
      "<section id=\"peak\"><h2>The peak, and where it came from</h2><p class=\"note\">Each run's peak reserved on its "
      "worst rank: the op that set it, and the rise that made it (the run of at most a hundredth of the ops before the peak of whose rise the most "
      "is still held at the peak).</p>";
  for (std::size_t v = 0; v < report.variants.size(); ++v) out += peakOf(report, v);
  return out + "</section>";
}

std::string pinsSection(const Report& report) {
  std::string out = "<section id=\"pins\"><h2>What pins the cache at the peak</h2>";
  for (std::size_t v = 0; v < report.variants.size(); ++v) out += pinsOf(report, v);
  return out + "</section>";
}

}  // namespace reservoir::replay::html
