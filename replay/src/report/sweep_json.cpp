// The sweep's ranking as JSON (`reservoir sweep --json`).
#include "reservoir/replay/report_json.h"

namespace reservoir::replay {
namespace {

nlohmann::json candidateJson(const SweepCandidate& c) {
  nlohmann::json cj = {{"edits", c.edits},
                       {"description", c.description},
                       {"peak_reserved", c.peak_reserved},
                       {"peak_allocated", c.peak_allocated},
                       {"objective_value", c.objective_value},
                       {"saving", c.saving},
                       {"empty_cache_calls", c.empty_cache_calls},
                       {"price_seconds", c.price_seconds},
                       {"mean_reserved", c.mean_reserved},
                       {"settings", c.settings},
                       {"within_cap", c.within_cap},
                       {"pareto", c.pareto},
                       {"oom", c.oom}};
  cj["calls_per_step"] = c.calls_per_step ? nlohmann::json(*c.calls_per_step) : nlohmann::json(nullptr);
  if (c.reserved_at_point) cj["reserved_at_point"] = *c.reserved_at_point;
  if (c.peak_in) cj["peak_in"] = *c.peak_in;
  return cj;
}

}  // namespace

nlohmann::json sweepJson(const SweepReport& rep, const std::string& path, std::size_t top) {
  nlohmann::json j;
  j["trace"] = path;
  j["objective"] = rep.objective;
  j["minimize"] = rep.objective_spec.text();
  j["baseline_peak_reserved"] = rep.baseline_peak_reserved;
  j["baseline_peak_allocated"] = rep.baseline_peak_allocated;
  j["baseline_objective"] = rep.baseline_objective;
  if (rep.baseline_reserved_at_point) j["baseline_reserved_at_point"] = *rep.baseline_reserved_at_point;
  j["steps"] =
      rep.steps ? nlohmann::json{{"count", rep.steps->count}, {"source", rep.steps->source}} : nlohmann::json(nullptr);
  j["max_calls"] = rep.max_calls ? nlohmann::json(*rep.max_calls) : nlohmann::json(nullptr);
  j["max_calls_source"] = rep.max_calls_source;
  j["evaluated"] = rep.evaluated;
  j["seconds"] = rep.seconds;
  j["cancelled"] = rep.cancelled;
  j["candidates"] = nlohmann::json::array();
  for (std::size_t i = 0; i < rep.candidates.size() && i < top; ++i)
    j["candidates"].push_back(candidateJson(rep.candidates[i]));
  // The Pareto view (saving against price, cheapest first): every point of it, even those
  // ranked below `top`.
  j["pareto"] = nlohmann::json::array();
  for (std::size_t i : rep.pareto) {
    nlohmann::json pj = candidateJson(rep.candidates[i]);
    pj["rank"] = i + 1;
    j["pareto"].push_back(pj);
  }
  return j;
}

}  // namespace reservoir::replay
