// A report's facts per rank, its axes and marks, the verdicts, and the words its renderings share.
#include <fmt/format.h>

#include <algorithm>

#include "report/report_internal.h"
#include "reservoir/replay/report_text.h"
#include "reservoir/replay/session.h"
#include "reservoir/simulator/sizes.h"

namespace reservoir::replay::detail {

std::string sizeWords(std::int64_t bytes) {
  return bytes < 0 ? "-" + sim::formatSize(static_cast<std::uint64_t>(-bytes))
                   : sim::formatSize(static_cast<std::uint64_t>(bytes));
}

std::string changeWords(std::int64_t delta) {
  if (delta == 0) return "same";
  return delta > 0 ? "+" + sizeWords(delta) : sizeWords(delta);
}

std::string withChangeWords(const std::string& value, std::optional<std::int64_t> change, bool recording) {
  if (recording || !change) return value;
  return fmt::format("{} ({})", value, changeWords(*change));
}

std::string probeCellWords(const ProbeCell& cell, std::optional<std::int64_t> change, bool recording) {
  if (cell.occurrences == 0) return "not reached";
  std::string v = sizeWords(cell.reserved);
  if (cell.occurrences > 1) v += fmt::format(" (max of {})", cell.occurrences);
  return withChangeWords(v, change, recording);
}

std::string demandCellWords(const DemandCell& cell) {
  if (cell.occurrences == 0) return "-";
  if (!cell.capacity_known) return "capacity unknown";
  return fmt::format("{} ({} free)", cell.fits ? "fits" : "does NOT fit", sizeWords(cell.least_free));
}

std::string peakCellWords(const ReportRow& row) {
  std::string peak = withChangeWords(sizeWords(row.peak_reserved), row.peak_reserved_change, row.variant == 0);
  if (row.oom_event) peak += fmt::format(", OUT OF MEMORY at event {}", *row.oom_event);
  return peak;
}

std::string shellLine(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    const bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) ||
             std::string_view("-_./:=@,+%").find(c) != std::string_view::npos;
    });
    std::string q = plain ? w : "'";
    if (!plain) {
      for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
      q += "'";
    }
    out += (out.empty() ? "" : " ") + q;
  }
  return out;
}

ReportFacts reportFacts(const ReportInput& input, const PreparedTrace& p) {
  const traces::Snapshot& snap = input.trace.snap();
  const auto& trace = snap.devices[input.device_index];
  ReportFacts f;
  f.path = input.trace.path;
  f.file_bytes = snap.file_bytes;
  f.device = trace.device;
  f.devices = snap.devices.size();
  f.events = trace.events.size();
  f.complete = p.conformance.window_complete;
  if (!trace.events.empty()) {
    f.first_time_us = trace.timeOf(0);
    f.last_time_us = f.first_time_us;
    for (std::size_t e = 0; e < trace.events.size(); ++e) f.last_time_us = std::max(f.last_time_us, trace.timeOf(e));
  }
  f.allocations = p.allocation_stacks.size();
  f.frames = snap.frames.size();
  f.stacks = snap.stackCount();
  f.recorded_settings = snap.settings.alloc_conf;
  f.layout_exact = p.conformance.layout_mismatches.empty();
  if (p.conformance.first_divergence) f.divergence_event = p.conformance.first_divergence->event_index;
  for (std::size_t i = 0; i < traces::AnomalyCounters::kCount; ++i) {
    const auto a = static_cast<traces::Anomaly>(i);
    if (snap.anomalies.count(a) == 0) continue;
    const auto& info = traces::anomalyInfo(a);
    f.anomalies.push_back({std::string(info.name), std::string(traces::severityName(info.severity)),
                           std::string(info.description), snap.anomalies.count(a)});
  }
  return f;
}

void fillAxes(const traces::DeviceTrace& trace, const EventTimes& times, std::size_t columns, ReportRank& rank) {
  const auto n = static_cast<std::int64_t>(trace.events.size());
  rank.by_event = {CurveAxis::Kind::kEvents, 0, n,
                   static_cast<std::size_t>(std::min<std::int64_t>(n, static_cast<std::int64_t>(columns)))};
  const std::int64_t t0 = times.empty() ? 0 : times.front();
  const std::int64_t t1 = times.empty() ? 0 : times.back() + 1;
  rank.by_time = {CurveAxis::Kind::kTime, t0, t1,
                  static_cast<std::size_t>(std::min<std::int64_t>(t1 - t0, static_cast<std::int64_t>(columns)))};
}

void fillAnnotations(const traces::Snapshot& snap, const traces::DeviceTrace& trace, const EventTimes& times,
                     std::size_t max_marks, ReportRank& rank) {
  const auto marks = markAnnotations(snap, trace, times);
  rank.annotation_count = marks.size();
  rank.facts.annotations = marks.size();
  // Evenly spread when there are more than the page can mark: every k-th.
  const std::size_t step = max_marks == 0 ? 0 : (marks.size() + max_marks - 1) / max_marks;
  for (std::size_t i = 0; step && i < marks.size(); i += step) {
    const auto& m = marks[i];
    rank.annotations.push_back(
        {m.start ? ReportMark::Kind::kAnnotationStart : ReportMark::Kind::kAnnotationEnd, m.event, m.time_us, m.name});
  }
}

namespace {

std::string recordingVerdict(const Report& report, const ReportRank& rank) {
  const RunResult& r = rank.runs[0].run();
  std::string out =
      fmt::format("peak reserved {} (event {}), peak allocated {} (event {})", sizeWords(r.peak_reserved.bytes),
                  r.peak_reserved.event, sizeWords(r.peak_allocated.bytes), r.peak_allocated.event);
  if (r.oom) out += fmt::format("; runs out of memory at event {}", r.oom->event);
  for (std::size_t i = 0; i < report.demands.size(); ++i)
    if (rank.runs[0].demands[i].occurrences)
      out += fmt::format("; {}: {}", report.demands[i], demandCellWords(rank.runs[0].demands[i]));
  if (report.ranks.size() > 1)
    out += fmt::format("; the worst of {} ranks is {}", report.ranks.size(), rank.trace.path);
  return out;
}

}  // namespace

void fillVerdicts(Report& report) {
  std::int64_t worst_peak = -1;
  for (std::size_t v = 0; v < report.variants.size(); ++v) {
    ReportVariantInfo& info = report.variants[v];
    std::int64_t most = -1;
    for (std::size_t r = 0; r < report.ranks.size(); ++r) {
      const std::int64_t peak = report.ranks[r].runs[v].run().peak_reserved.bytes;
      if (peak > most) {
        most = peak;
        info.worst_rank = r;
      }
      if (peak > worst_peak) {
        worst_peak = peak;
        report.worst_rank = r;
      }
    }
    const ReportRank& rank = report.ranks[info.worst_rank];
    const WhatIfReport& rep = rank.runs[v].report;
    if (v == 0) {
      info.edits = "no edits (the recording, replayed)";
      info.verdict = recordingVerdict(report, rank);
      continue;
    }
    info.edits = describeEdits(rep);
    info.verdict = whatIfVerdict(rep);
    if (report.ranks.size() > 1)
      info.verdict += fmt::format("; the worst of {} ranks is {}", report.ranks.size(), rank.trace.path);
  }
  if (report.variants.size() == 1) {
    report.verdict = "recording: " + report.variants[0].verdict;
    return;
  }
  report.verdict = report.variants[1].name + ": " + report.variants[1].verdict;
  if (report.variants.size() > 2)
    report.verdict +=
        fmt::format(" ({} more variant{} below)", report.variants.size() - 2, report.variants.size() > 3 ? "s" : "");
}

}  // namespace reservoir::replay::detail

namespace reservoir::replay {

std::string shellWords(const std::vector<std::string>& words) { return detail::shellLine(words); }

}  // namespace reservoir::replay
