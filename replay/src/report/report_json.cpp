// The report as JSON (report.h): the model's figures, every run's what-if report as whatIfJson.
#include "reservoir/replay/report_json.h"

#include "report/report_internal.h"

namespace reservoir::replay {
namespace {

nlohmann::json stepJson(const traces::Snapshot& snap, const PeakStep& s) {
  return {{"op", s.op},
          {"event_index", s.event},
          {"time_us", s.time_us},
          {"before", s.before},
          {"after", s.after},
          {"rise", s.rise()},
          {"held_at_peak", s.held},
          {"request", s.request},
          {"stack", describeStack(snap, s.stack, 8)}};
}

nlohmann::json climbJson(const traces::Snapshot& snap, const PeakClimb& c) {
  return {{"first_op", c.first.op},
          {"last_op", c.last.op},
          {"first_event_index", c.first.event},
          {"last_event_index", c.last.event},
          {"first_time_us", c.first.time_us},
          {"last_time_us", c.last.time_us},
          {"before", c.first.before},
          {"after", c.last.after},
          {"rise", c.rise()},
          {"held_at_peak", c.held},
          {"rising_ops", c.rising_ops},
          {"span_ops", c.span_ops},
          {"largest_step", stepJson(snap, c.largest)}};
}

nlohmann::json originJson(const traces::Snapshot& snap, const PeakOrigin& o) {
  if (!o.known) return nullptr;
  return {{"peak", o.peak},
          {"start", o.start},
          {"set_by", stepJson(snap, o.set)},
          {"largest_rise", stepJson(snap, o.largest_rise)},
          {"climb", climbJson(snap, o.climb)}};
}

nlohmann::json factsJson(const ReportFacts& f) {
  nlohmann::json anomalies = nlohmann::json::array();
  for (const auto& a : f.anomalies)
    anomalies.push_back(
        {{"name", a.name}, {"severity", a.severity}, {"count", a.count}, {"description", a.description}});
  return {{"trace", f.path},
          {"file_bytes", f.file_bytes},
          {"device", f.device},
          {"devices", f.devices},
          {"events", f.events},
          {"complete", f.complete},
          {"first_time_us", f.first_time_us},
          {"last_time_us", f.last_time_us},
          {"allocations", f.allocations},
          {"frames", f.frames},
          {"stacks", f.stacks},
          {"annotations", f.annotations},
          {"recorded_settings", f.recorded_settings},
          {"layout_exact", f.layout_exact},
          {"divergence_event", f.divergence_event ? nlohmann::json(*f.divergence_event) : nlohmann::json(nullptr)},
          {"anomalies", anomalies}};
}

nlohmann::json rowJson(const Report& report, const ReportRow& row) {
  nlohmann::json probes = nlohmann::json::object(), changes = nlohmann::json::object();
  for (std::size_t i = 0; i < row.probes.size(); ++i) {
    probes[report.probes[i]] = {
        {"reserved", row.probes[i].occurrences ? nlohmann::json(row.probes[i].reserved) : nlohmann::json(nullptr)},
        {"occurrences", row.probes[i].occurrences}};
    changes[report.probes[i]] = row.probe_change[i] ? nlohmann::json(*row.probe_change[i]) : nlohmann::json(nullptr);
  }
  nlohmann::json demands = nlohmann::json::object();
  for (std::size_t i = 0; i < row.demands.size(); ++i) {
    const DemandCell& d = row.demands[i];
    demands[report.demands[i]] = {
        {"occurrences", d.occurrences},
        {"capacity_known", d.capacity_known},
        {"fits", d.occurrences && d.capacity_known ? nlohmann::json(d.fits) : nlohmann::json()},
        {"least_free", d.occurrences ? nlohmann::json(d.least_free) : nlohmann::json()}};
  }
  return {{"variant", report.variants[row.variant].name},
          {"rank", row.rank},
          {"trace", report.ranks[row.rank].trace.path},
          {"probes", probes},
          {"demands", demands},
          {"peak_allocated", row.peak_allocated},
          {"peak_reserved", row.peak_reserved},
          {"probe_changes", changes},
          {"peak_allocated_change", row.peak_allocated_change},
          {"peak_reserved_change", row.peak_reserved_change},
          {"worst", row.worst},
          {"oom_event", row.oom_event ? nlohmann::json(*row.oom_event) : nlohmann::json(nullptr)}};
}

nlohmann::json variantJson(const Report& report, std::size_t v) {
  const ReportVariantInfo& info = report.variants[v];
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& rank : report.ranks) {
    const ReportRun& run = rank.runs[v];
    nlohmann::json j = whatIfJson(rank.trace.snap(), run.report, rank.trace.path);
    j["peak_origin"] = {{"reserved", originJson(rank.trace.snap(), run.reserved_origin)},
                        {"allocated", originJson(rank.trace.snap(), run.allocated_origin)}};
    j["edit_points"] = run.edit_points;
    ranks.push_back(std::move(j));
  }
  return {{"name", info.name},
          {"edits", info.edits},
          {"verdict", info.verdict},
          {"worst_rank", info.worst_rank},
          {"worst_trace", report.ranks[info.worst_rank].trace.path},
          {"ranks", ranks}};
}

}  // namespace

nlohmann::json reportJson(const Report& report) {
  nlohmann::json j;
  j["verdict"] = report.verdict;
  j["probes"] = report.probes;
  j["demands"] = report.demands;
  j["worst_rank"] = report.worst_rank;
  j["worst_trace"] = report.ranks.empty() ? std::string() : report.ranks[report.worst_rank].trace.path;
  j["variants"] = nlohmann::json::array();
  for (std::size_t v = 0; v < report.variants.size(); ++v) j["variants"].push_back(variantJson(report, v));
  j["ranks"] = nlohmann::json::array();
  for (const auto& rank : report.ranks) j["ranks"].push_back(factsJson(rank.facts));
  j["table"] = nlohmann::json::array();
  for (const ReportRow& row : reportTable(report)) j["table"].push_back(rowJson(report, row));
  std::vector<std::string> paths;
  for (const auto& rank : report.ranks) paths.push_back(rank.trace.path);
  j["sweep"] = report.sweep ? sweepJson(*report.sweep, paths, report.sweep_top) : nlohmann::json(nullptr);
  return j;
}

}  // namespace reservoir::replay
