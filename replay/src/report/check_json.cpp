// The conformance report as JSON (`reservoir check --json`).
#include "reservoir/replay/report_json.h"

namespace reservoir::replay {

namespace {

nlohmann::json mismatchesJson(const std::vector<Mismatch>& ms) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& m : ms) arr.push_back({{"what", m.what}, {"expected", m.expected}, {"simulated", m.simulated}});
  return arr;
}

}  // namespace

nlohmann::json conformanceJson(const ConformanceReport& r, const std::string& path) {
  nlohmann::json j;
  nameTrace(j, path);
  j["device"] = r.device;
  j["exact"] = r.exact();
  j["events_compared"] = r.events_compared;
  j["events_total"] = r.events_total;
  j["settings"] = r.settings;
  j["fraction"] = r.fraction;
  j["total_memory"] = r.total_memory;
  j["window_complete"] = r.window_complete;
  j["empty_cache_calls_inferred"] = r.empty_cache_calls;
  if (r.first_divergence) {
    const auto& d = *r.first_divergence;
    j["first_divergence"] = {{"event_index", d.event_index},
                             {"expected", d.expected},
                             {"simulated", d.simulated},
                             {"request", d.request},
                             {"stack", d.stack},
                             {"pool_state", d.pool_state},
                             {"reason", d.reason}};
  } else {
    j["first_divergence"] = nullptr;
  }
  j["layout_mismatches"] = mismatchesJson(r.layout_mismatches);
  j["stats_mismatches"] = mismatchesJson(r.stats_mismatches);
  j["stats_compared"] = r.stats_compared.size();
  j["invariant_failure"] = r.invariant_failure.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.invariant_failure);
  if (r.missing_fraction)
    j["missing_fraction"] = {{"why", r.missing_fraction->why},
                             {"fraction", r.missing_fraction->fraction ? nlohmann::json(*r.missing_fraction->fraction)
                                                                       : nlohmann::json(nullptr)},
                             {"tried", r.missing_fraction->tried}};
  else
    j["missing_fraction"] = nullptr;
  j["notes"] = r.notes;
  return j;
}

nlohmann::json checksJson(nlohmann::json per_trace, std::size_t exact, std::size_t not_exact,
                          nlohmann::json unreadable) {
  return {{"traces", std::move(per_trace)},
          {"exact", exact},
          {"not_exact", not_exact},
          {"unreadable", std::move(unreadable)}};
}

}  // namespace reservoir::replay
