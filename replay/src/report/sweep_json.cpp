// The sweep's ranking as JSON (`reservoir sweep --json`).
#include "reservoir/replay/report_json.h"

namespace reservoir::replay {

nlohmann::json sweepJson(const SweepReport& rep, const std::string& path, std::size_t top) {
  nlohmann::json j;
  j["trace"] = path;
  j["objective"] = rep.objective;
  j["baseline_peak_reserved"] = rep.baseline_peak_reserved;
  j["baseline_peak_allocated"] = rep.baseline_peak_allocated;
  if (rep.baseline_reserved_at_point) j["baseline_reserved_at_point"] = *rep.baseline_reserved_at_point;
  j["evaluated"] = rep.evaluated;
  j["seconds"] = rep.seconds;
  j["candidates"] = nlohmann::json::array();
  for (std::size_t i = 0; i < rep.candidates.size() && i < top; ++i) {
    const auto& c = rep.candidates[i];
    nlohmann::json cj = {{"edits", c.edits},
                         {"description", c.description},
                         {"peak_reserved", c.peak_reserved},
                         {"peak_allocated", c.peak_allocated},
                         {"saving", c.saving},
                         {"empty_cache_calls", c.empty_cache_calls},
                         {"oom", c.oom}};
    if (c.reserved_at_point) cj["reserved_at_point"] = *c.reserved_at_point;
    j["candidates"].push_back(cj);
  }
  return j;
}

}  // namespace reservoir::replay
