// buildReport: every variant on every rank, the curves, peaks and pins of each run (report.h).
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "report/report_internal.h"
#include "reservoir/replay/session.h"

namespace reservoir::replay {
namespace {

// Prepared traces of one rank, by the total memory the environment gives (a capacity can change it).
class PreparedCache {
 public:
  explicit PreparedCache(const ReportInput& input, const PreparedTrace* seed = nullptr)
      : input_(input), seed_(seed) {}
  Expected<const PreparedTrace*> get(const EditedRunOptions& options) {
    const ReplayEnvironment env = editedRunEnvironment(input_.env, options);
    if (seed_ && env.total_memory == input_.env.total_memory) return seed_;
    for (const auto& [key, prepared] : entries_)
      if (key == env.total_memory) return prepared.get();
    auto p = prepareTrace(input_.trace.snapshot, input_.device_index, env);
    if (!p) return p.status();
    entries_.emplace_back(env.total_memory, std::make_unique<PreparedTrace>(std::move(*p)));
    return entries_.back().second.get();
  }

 private:
  const ReportInput& input_;
  const PreparedTrace* seed_;  // prepared in input_.env by the caller
  std::vector<std::pair<std::optional<ByteCount>, std::unique_ptr<PreparedTrace>>> entries_;
};

// Op j's position on an axis: its first event, or that event's time (read as the curves are made:
// two arrays of a value per op were 16 bytes an op).
std::int64_t opTime(const PreparedTrace& p, const EventTimes& times, std::size_t j) {
  const std::uint32_t e = p.program.ops[j].first_event;
  return e < times.size() ? times[e] : (times.empty() ? 0 : times.back());
}

// The run's reserved and allocated after each op (its curves, RunSettings::keep_curves) over `axis`.
template <typename At>
RunCurves curvesOn(const RunResult& r, At at, const CurveAxis& axis, const PreparedTrace& p) {
  const OpCurves& c = r.curves;
  std::size_t hint = 0;
  return {detail::decimateStepsBy(
              c.reserved.size(), at, [&](std::size_t j) { return c.reserved.at(j, hint); },
              startValue(p, PeakQuantity::kReserved), axis),
          detail::decimateStepsBy(
              c.allocated.size(), at, [&](std::size_t j) { return c.allocated[j]; },
              startValue(p, PeakQuantity::kAllocated), axis)};
}

Status markEdits(const PreparedTrace& p, const WhatIfOptions& o, const EventTimes& times, std::size_t max_marks,
                 ReportRun& run) {
  std::vector<Edit> placed;
  for (const auto& e : o.edits)
    if (e.kind != Edit::Kind::kProbe && e.kind != Edit::Kind::kDemand) placed.push_back(e);
  auto resolved = resolveEdits(p, placed);
  if (!resolved) return resolved.status();
  for (const auto& r : *resolved)
    for (const Gap& g : r.gaps) {
      ++run.edit_points;
      if (run.edit_marks.size() >= max_marks) continue;
      const std::int64_t t = times.empty() ? 0 : times[std::min<std::size_t>(g.boundary, times.size() - 1)];
      run.edit_marks.push_back(
          {ReportMark::Kind::kEdit, g.boundary, t, fmt::format("{} {}", editKindName(r.edit.kind), r.edit.text)});
    }
  return {};
}

std::vector<ProbeCell> probeCells(const RunResult& r, const std::vector<std::string>& points) {
  std::vector<ProbeCell> cells(points.size());
  for (const Probe& probe : r.probes)
    for (std::size_t i = 0; i < points.size(); ++i)
      if (probe.point == points[i]) {
        cells[i].reserved = cells[i].occurrences ? std::max(cells[i].reserved, probe.reserved) : probe.reserved;
        ++cells[i].occurrences;
      }
  return cells;
}

std::vector<DemandCell> demandCells(const RunResult& r, const std::vector<std::string>& texts) {
  std::vector<DemandCell> cells(texts.size());
  for (const DemandResult& d : r.demands)
    for (std::size_t i = 0; i < texts.size(); ++i)
      if (d.text == texts[i]) {
        DemandCell& c = cells[i];
        c.least_free = c.occurrences ? std::min(c.least_free, d.free) : d.free;
        c.fits = c.fits && d.fits;
        c.capacity_known = d.capacity_known;
        ++c.occurrences;
      }
  return cells;
}

struct RankContext {
  const PreparedTrace* prepared = nullptr;
  const EventTimes* times = nullptr;
  const ReportRank* rank = nullptr;
  const std::vector<std::string>* probes = nullptr;
  const std::vector<std::string>* demands = nullptr;
  std::size_t max_marks = 0;
};

Expected<ReportRun> makeRun(const RankContext& c, const detail::PlannedRun& planned) {
  auto rep = runWhatIfOn(*c.prepared, planned.options);
  if (!rep) return rep.status();
  ReportRun run;
  run.report = std::move(*rep);
  const RunResult& w = run.report.whatif;
  run.reserved_origin = peakOrigin(*c.prepared, w, PeakQuantity::kReserved);
  run.allocated_origin = peakOrigin(*c.prepared, w, PeakQuantity::kAllocated);
  if (w.at_peak) run.pins = cachePins(*w.at_peak);
  const PreparedTrace& p = *c.prepared;
  run.by_event = curvesOn(
      w, [&](std::size_t j) { return std::int64_t{p.program.ops[j].first_event}; }, c.rank->by_event, p);
  run.by_time = curvesOn(
      w, [&](std::size_t j) { return opTime(p, *c.times, j); }, c.rank->by_time, p);
  run.probes = probeCells(w, *c.probes);
  run.demands = demandCells(w, *c.demands);
  if (Status st = markEdits(*c.prepared, planned.options, *c.times, c.max_marks, run); !st.ok()) return st;
  run.report.whatif.curves = OpCurves{};  // decimated above; the report keeps no value per op
  return run;
}

Expected<ReportRank> makeRank(const ReportInput& input, const std::vector<detail::PlannedRun>& plan,
                              const ReportOptions& options, const Report& report, PreparedCache& cache) {
  ReportRank rank;
  rank.trace = input.trace;
  rank.device_index = input.device_index;
  const auto& trace = input.trace.snap().devices[input.device_index];
  const EventTimes times(trace);  // made nondecreasing
  detail::fillAxes(trace, times, options.columns, rank);
  detail::fillAnnotations(input.trace.snap(), trace, times, options.max_marks, rank);
  // Each variant's own edits first: one that names nothing in this rank is that variant's error.
  for (const auto& p : plan) {
    auto prepared = cache.get(p.options);
    if (!prepared) return prepared.status();
    if (auto resolved = resolveEdits(**prepared, p.own); !resolved)
      return resolved.status().prefixed(p.name == "recording" ? std::string() : "variant " + p.name + ": ");
  }
  for (std::size_t v = 0; v < plan.size(); ++v) {
    if (options.cancel && options.cancel->load()) return Status::error("the report was cancelled");
    if (options.progress) options.progress(input.trace.path + ": " + plan[v].name, v, plan.size());
    auto prepared = cache.get(plan[v].options);
    if (!prepared) return prepared.status();
    if (v == 0) {
      rank.facts = detail::reportFacts(input, **prepared);
      rank.facts.annotations = rank.annotation_count;
    }
    RankContext c{*prepared, &times, &rank, &report.probes, &report.demands, options.max_marks};
    auto run = makeRun(c, plan[v]);
    if (!run) return run.status().prefixed(fmt::format("variant {}: ", plan[v].name));
    rank.runs.push_back(std::move(*run));
  }
  return rank;
}

Expected<SweepReport> sweepRank(const SweepOptions& options, PreparedCache& cache) {
  auto prepared = cache.get(options);
  if (!prepared) return prepared.status();
  auto sweep = runSweep(**prepared, options);
  if (!sweep) return sweep.status().prefixed("sweep: ");
  if (sweep->cancelled) return Status::error("the report was cancelled");
  return sweep;
}

}  // namespace

namespace {

Expected<Report> buildReportWith(const std::vector<ReportInput>& inputs, const ReportOptions& options,
                                 const PreparedTrace* seed) {
  if (inputs.empty()) return Status::usage("no traces to report on");
  Report report;
  auto plan = detail::planRuns(options, report.probes, report.demands);
  if (!plan) return plan.status();
  for (const auto& p : *plan) report.variants.push_back({p.name, {}, {}, 0});
  std::vector<SweepReport> sweeps;
  for (const auto& input : inputs) {
    PreparedCache cache(input, seed);  // one rank's prepared traces at a time
    auto rank = makeRank(input, *plan, options, report, cache);
    if (!rank) return rank.status().prefixed(input.trace.path + ": ");
    report.ranks.push_back(std::move(*rank));
    if (!options.sweep) continue;
    if (options.progress) options.progress(input.trace.path + ": sweep", 0, 1);
    auto sweep = sweepRank(*options.sweep, cache);
    if (!sweep) return sweep.status().prefixed(input.trace.path + ": ");
    sweeps.push_back(std::move(*sweep));
  }
  if (options.sweep) {
    report.sweep = sweeps.size() == 1 ? std::move(sweeps[0]) : worstOverTraces(sweeps);
    report.sweep_top = options.sweep_top;
  }
  detail::fillVerdicts(report);
  return report;
}

}  // namespace

Expected<Report> buildReport(const std::vector<ReportInput>& inputs, const ReportOptions& options) {
  return buildReportWith(inputs, options, nullptr);
}

Expected<Report> buildReportOn(const ReportInput& input, const PreparedTrace& prepared, const ReportOptions& options) {
  if (prepared.snapshot != input.trace.snapshot || prepared.device_index != input.device_index)
    return Status::usage("the prepared trace is not the report's trace and device");
  return buildReportWith({input}, options, &prepared);
}

}  // namespace reservoir::replay
