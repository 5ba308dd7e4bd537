// The gate's verdict as JSON (`reservoir gate --json`).
#include "reservoir/replay/report_json.h"

namespace reservoir::replay {

namespace {

nlohmann::json gateTraceJson(const ConditionVerdict& c, const TraceVerdict& t, const std::string& path) {
  nlohmann::json j = traceNamed(path);
  j["verdict"] = verdictName(t.verdict);
  switch (c.kind) {
    case ConditionVerdict::Kind::kPeakReserved:
      j["peak_reserved"] = t.value;
      j["event_index"] = t.event;
      break;
    case ConditionVerdict::Kind::kDemand:
      j["free"] = t.verdict == Verdict::kUnknown ? nlohmann::json(nullptr) : nlohmann::json(t.value);
      j["fits"] = t.verdict == Verdict::kPass;
      j["times_reached"] = t.count;
      break;
    case ConditionVerdict::Kind::kOom:
      j["oom"] = t.verdict == Verdict::kFail
                     ? nlohmann::json{{"event_index", t.event}, {"size", t.value}, {"count", t.count}}
                     : nlohmann::json(nullptr);
      break;
  }
  j["capacity"] = t.capacity ? nlohmann::json(*t.capacity) : nlohmann::json(nullptr);
  return j;
}

}  // namespace

nlohmann::json gateJson(const GateVerdict& v, const std::vector<std::string>& paths,
                        const std::vector<WhatIfReport>& reports, std::optional<sim::ByteCount> budget) {
  nlohmann::json conditions = nlohmann::json::array();
  for (const auto& c : v.conditions) {
    nlohmann::json j{{"kind", conditionKindName(c.kind)},
                     {"verdict", verdictName(c.verdict)},
                     {"worst_trace", paths[c.worst]},
                     {"reason", c.reason}};
    // What would let an undecided condition be judged, as data ("capacity"); null otherwise.
    j["missing"] = c.missing ? nlohmann::json(inputName(*c.missing)) : nlohmann::json(nullptr);
    if (c.kind == ConditionVerdict::Kind::kPeakReserved) j["budget"] = c.limit;
    if (c.kind == ConditionVerdict::Kind::kDemand) {
      j["demand"] = c.text;
      j["point"] = c.point;
      j["bytes"] = c.limit;
    }
    j["traces"] = nlohmann::json::array();
    for (const auto& t : c.traces) j["traces"].push_back(gateTraceJson(c, t, paths[t.trace]));
    conditions.push_back(std::move(j));
  }
  nlohmann::json per = nlohmann::json::array();
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const auto& r = reports[i].whatif;
    bool ok = true;
    for (const auto& c : v.conditions) ok = ok && c.traces[i].verdict == Verdict::kPass;
    nlohmann::json t = traceNamed(paths[i]);
    t.update({{"pass", ok}, {"peak_reserved", r.peak_reserved.bytes}, {"oom", r.oom.has_value()}});
    per.push_back(std::move(t));
  }
  return {{"pass", v.pass},
          {"undecided", v.undecided},
          {"unjudged", v.unjudged},
          {"reason", v.reason},
          {"missing", v.missing ? nlohmann::json(inputName(*v.missing)) : nlohmann::json(nullptr)},
          {"worst_trace", paths[v.worst_trace]},
          {"budget", budget ? nlohmann::json(*budget) : nlohmann::json(nullptr)},
          {"max_peak_reserved", reports[v.worst_trace].whatif.peak_reserved.bytes},
          {"conditions", conditions},
          {"traces", per}};
}

nlohmann::json gateFactsJson(const WhatIfReport& report) {
  const RunResult& r = report.whatif;
  nlohmann::json demands = nlohmann::json::array();
  for (const auto& d : r.demands)
    demands.push_back({{"text", d.text},
                       {"bytes", d.bytes},
                       {"capacity_known", d.capacity_known},
                       {"fits", d.fits},
                       {"free", d.free}});
  return {{"peak_reserved", r.peak_reserved.bytes},
          {"peak_event", r.peak_reserved.event},
          {"oom", r.oom ? nlohmann::json{{"event", r.oom->event}, {"size", r.oom->size}, {"count", r.oom->count}}
                        : nlohmann::json(nullptr)},
          {"demands", demands},
          {"capacity", report.capacity ? nlohmann::json(*report.capacity) : nlohmann::json(nullptr)},
          {"capacity_source", report.capacity_source}};
}

WhatIfReport gateFactsFromJson(const nlohmann::json& j) {
  WhatIfReport report;
  RunResult& r = report.whatif;
  r.peak_reserved.bytes = j.at("peak_reserved").get<std::int64_t>();
  r.peak_reserved.event = j.at("peak_event").get<std::uint32_t>();
  if (!j.at("oom").is_null()) {
    OomInfo oom;
    oom.event = j["oom"].at("event").get<std::uint32_t>();
    oom.size = j["oom"].at("size").get<sim::ByteCount>();
    oom.count = j["oom"].at("count").get<std::size_t>();
    r.oom = oom;
  }
  for (const auto& d : j.at("demands"))
    r.demands.push_back(DemandResult{d.at("text").get<std::string>(), d.at("bytes").get<sim::ByteCount>(),
                                     d.at("capacity_known").get<bool>(), d.at("fits").get<bool>(),
                                     d.at("free").get<std::int64_t>()});
  if (!j.at("capacity").is_null()) report.capacity = j["capacity"].get<sim::ByteCount>();
  report.capacity_source = j.at("capacity_source").get<std::string>();
  return report;
}

}  // namespace reservoir::replay
