// The CI gate's verdict over the what-if reports of one or more traces.
#include <fmt/format.h>

#include <algorithm>

#include "reservoir/replay/gate.h"
#include "reservoir/simulator/sizes.h"

namespace reservoir::replay {
namespace {

// "136.34 GiB (146397069312 bytes)": PyTorch's format with the exact bytes.
std::string sized(std::int64_t bytes) {
  if (bytes < 0) return fmt::format("-{} ({} bytes)", sim::formatSize(static_cast<std::uint64_t>(-bytes)), bytes);
  return fmt::format("{} ({} bytes)", sim::formatSize(static_cast<std::uint64_t>(bytes)), bytes);
}

std::string capacityText(const WhatIfReport& rep, std::optional<double> fraction) {
  std::string capacity = "an unknown capacity (" + rep.capacity_source + ")";
  if (rep.capacity)
    capacity = fmt::format("capacity {} ({})", sized(static_cast<std::int64_t>(*rep.capacity)), rep.capacity_source);
  if (!fraction) return capacity;
  return fmt::format("memory fraction {} of {}", *fraction, rep.capacity ? capacity : "the device's total memory");
}

ConditionVerdict judgeOom(const std::vector<GateInput>& traces, std::optional<double> fraction) {
  ConditionVerdict c;
  c.kind = ConditionVerdict::Kind::kOom;
  bool found = false;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    const auto& rep = *traces[i].report;
    TraceVerdict t{i, Verdict::kPass, 0, 0, 0, rep.capacity};
    if (const auto& oom = rep.whatif.oom) {
      t.verdict = Verdict::kFail;
      t.value = static_cast<std::int64_t>(oom->size);
      t.event = oom->event;
      t.count = oom->count;
      if (!found) {
        found = true;
        c.worst = i;
        c.verdict = Verdict::kFail;
        c.reason = fmt::format("{}: predicted out of memory at event {} (malloc of {}; {} failed malloc(s)) under {}",
                               traces[i].name, oom->event, sized(t.value), oom->count, capacityText(rep, fraction));
      }
    }
    c.traces.push_back(t);
  }
  if (!found)
    c.reason = fmt::format("{}: no out of memory predicted under {}", traces[0].name,
                           capacityText(*traces[0].report, fraction));
  return c;
}

ConditionVerdict judgePeak(const std::vector<GateInput>& traces, sim::ByteCount budget) {
  ConditionVerdict c;
  c.kind = ConditionVerdict::Kind::kPeakReserved;
  c.limit = static_cast<std::int64_t>(budget);
  std::int64_t worst = -1;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    const auto& rep = *traces[i].report;
    const auto& peak = rep.whatif.peak_reserved;
    TraceVerdict t{i, peak.bytes > c.limit ? Verdict::kFail : Verdict::kPass, peak.bytes, peak.event, 0, rep.capacity};
    if (peak.bytes > worst) {
      worst = peak.bytes;
      c.worst = i;
    }
    c.traces.push_back(t);
  }
  const std::string& name = traces[c.worst].name;
  if (worst > c.limit) {
    c.verdict = Verdict::kFail;
    c.reason = fmt::format("{}: predicted peak reserved {} exceeds the budget {} by {} ({} > {} bytes)", name,
                           sim::formatSize(static_cast<std::uint64_t>(worst)), sim::formatSize(budget),
                           sim::formatSize(static_cast<std::uint64_t>(worst - c.limit)), worst, c.limit);
  } else {
    c.reason = fmt::format("{}: predicted peak reserved {} <= budget {}", name, sized(worst), sized(c.limit));
  }
  return c;
}

// Every occurrence of the demand's point in one trace: the least free bytes decide.
TraceVerdict demandOnTrace(std::size_t index, const WhatIfReport& rep, const Edit& demand) {
  TraceVerdict t{index, Verdict::kPass, 0, 0, 0, rep.capacity};
  bool unknown = false, fails = false, have = false;
  for (const auto& d : rep.whatif.demands) {
    if (d.text != demand.text) continue;
    ++t.count;
    if (!d.capacity_known) {
      unknown = true;
      continue;
    }
    if (!have || d.free < t.value) t.value = d.free;
    have = true;
    fails = fails || !d.fits;
  }
  t.verdict = unknown ? Verdict::kUnknown : fails ? Verdict::kFail : Verdict::kPass;
  return t;
}

std::string_view pointText(const Edit& demand) {
  const auto at = demand.text.rfind('@');
  return at == std::string::npos ? std::string_view(demand.text) : std::string_view(demand.text).substr(at + 1);
}

Expected<ConditionVerdict> judgeDemand(const std::vector<GateInput>& traces, const Edit& demand,
                                       const Wording& wording) {
  ConditionVerdict c;
  c.kind = ConditionVerdict::Kind::kDemand;
  c.text = demand.text;
  c.point = std::string(pointText(demand));
  c.limit = static_cast<std::int64_t>(demand.bytes);
  for (std::size_t i = 0; i < traces.size(); ++i) {
    TraceVerdict t = demandOnTrace(i, *traces[i].report, demand);
    if (t.count == 0)
      return Status::usage(fmt::format("{}: {} '{}': its point was never reached", traces[i].name,
                                       wording.label(Input::kDemand), demand.text));
    c.traces.push_back(t);
  }
  // The first trace where it cannot be judged, else the one with the least free bytes.
  const auto unknown = std::find_if(c.traces.begin(), c.traces.end(),
                                    [](const TraceVerdict& t) { return t.verdict == Verdict::kUnknown; });
  if (unknown != c.traces.end()) {
    c.verdict = Verdict::kUnknown;
    c.worst = unknown->trace;
  } else {
    c.worst = std::min_element(c.traces.begin(), c.traces.end(), [](const TraceVerdict& a, const TraceVerdict& b) {
                return a.value < b.value;
              })->trace;
  }
  const auto& w = c.traces[c.worst];
  const std::string& name = traces[c.worst].name;
  if (c.verdict == Verdict::kUnknown) {
    c.missing = Input::kCapacity;
    c.reason = fmt::format("{}: demand {} at {} cannot be judged: the capacity is unknown (give {})", name,
                           sized(c.limit), c.point, wording.give(Input::kCapacity));
    return c;
  }
  c.verdict = w.verdict;
  const char* verb = w.verdict == Verdict::kFail ? "does NOT fit" : "fits";
  c.reason = fmt::format("{}: demand {} at {} {}: free {}", name, sized(c.limit), c.point, verb, sized(w.value));
  if (w.verdict == Verdict::kFail) c.reason += fmt::format(", short by {}", sized(c.limit - w.value));
  if (w.count > 1) c.reason += fmt::format(" (the least over {} times the point is reached)", w.count);
  return c;
}

}  // namespace

std::string_view verdictName(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "pass";
    case Verdict::kFail: return "fail";
    case Verdict::kUnknown: return "unknown";
  }
  return "unknown";
}

std::string_view conditionKindName(ConditionVerdict::Kind k) {
  switch (k) {
    case ConditionVerdict::Kind::kPeakReserved: return "peak_reserved";
    case ConditionVerdict::Kind::kDemand: return "demand";
    case ConditionVerdict::Kind::kOom: return "oom";
  }
  return "unknown";
}

bool hasCondition(const GateConditions& conditions, bool capacity_given) {
  return conditions.max_peak_reserved.has_value() || !conditions.demands.empty() ||
         (conditions.no_oom && capacity_given);
}

Expected<GateVerdict> judgeGate(const std::vector<GateInput>& traces, const GateConditions& conditions) {
  if (traces.empty()) return Status::error("gate: no trace to judge");
  for (const auto& t : traces)
    if (t.report == nullptr) return Status::error(fmt::format("gate: no what-if report for {}", t.name));
  GateVerdict v;
  if (conditions.no_oom) v.conditions.push_back(judgeOom(traces, conditions.fraction));
  for (const auto& d : conditions.demands) {
    if (d.kind != Edit::Kind::kDemand) return Status::error(fmt::format("gate: '{}' is not a demand", d.text));
    auto c = judgeDemand(traces, d, wordingOr(conditions.wording));
    if (!c) return c.status();
    v.conditions.push_back(std::move(*c));
  }
  if (conditions.max_peak_reserved) v.conditions.push_back(judgePeak(traces, *conditions.max_peak_reserved));

  // Without a failure, the trace with the largest peak reserved is the worst.
  for (std::size_t i = 1; i < traces.size(); ++i)
    if (traces[i].report->whatif.peak_reserved.bytes > traces[v.worst_trace].report->whatif.peak_reserved.bytes)
      v.worst_trace = i;
  const auto first = [&](Verdict which) {
    return std::find_if(v.conditions.begin(), v.conditions.end(),
                        [which](const ConditionVerdict& c) { return c.verdict == which; });
  };
  if (auto f = first(Verdict::kFail); f != v.conditions.end()) {
    v.pass = false;
    v.worst_trace = f->worst;
    v.reason = f->reason;
  } else if (auto u = first(Verdict::kUnknown); u != v.conditions.end()) {
    v.pass = false;
    v.undecided = true;
    v.missing = u->missing;
    v.worst_trace = u->worst;
    v.reason = u->reason;
  }
  v.summary = fmt::format("{} condition(s) on {} trace(s): ", v.conditions.size(), traces.size());
  for (std::size_t i = 0; i < v.conditions.size(); ++i) v.summary += (i ? "; " : "") + v.conditions[i].reason;
  if (traces.size() > 1 && !v.pass) v.reason += fmt::format(" (worst of {} traces)", traces.size());
  return v;
}

void addUnjudgedTraces(GateVerdict& v, const std::vector<std::string>& names) {
  if (names.empty()) return;
  v.unjudged.insert(v.unjudged.end(), names.begin(), names.end());
  const bool decided_no = !v.pass && !v.undecided;  // a failure among the traces read stands
  v.pass = false;
  if (decided_no) return;
  const std::size_t judged = v.conditions.empty() ? 0 : v.conditions.front().traces.size();
  v.reason = fmt::format("{} of {} traces gave no report to judge ({}{}), so the gate cannot pass; the {} judged: {}",
                         v.unjudged.size(), v.unjudged.size() + judged, v.unjudged.front(),
                         v.unjudged.size() > 1 ? ", ..." : "", judged, v.undecided ? v.reason : v.summary);
}

}  // namespace reservoir::replay
