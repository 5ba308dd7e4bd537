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

nlohmann::json sweepJson(const SweepReport& rep, const std::vector<std::string>& paths, std::size_t top) {
  if (paths.size() == 1) return sweepJson(rep, paths[0], top);
  nlohmann::json j = sweepJson(rep, std::string(), top);
  j.erase("trace");
  j["traces"] = paths;
  j["scored_as"] = "worst trace: each candidate's largest objective over the traces";
  return j;
}

SweepReport sweepReportFromJson(const nlohmann::json& j) {
  SweepReport rep;
  rep.objective = j.at("objective").get<std::string>();
  rep.baseline_peak_reserved = j.at("baseline_peak_reserved").get<std::int64_t>();
  rep.baseline_peak_allocated = j.at("baseline_peak_allocated").get<std::int64_t>();
  if (j.contains("baseline_reserved_at_point"))
    rep.baseline_reserved_at_point = j["baseline_reserved_at_point"].get<std::int64_t>();
  rep.evaluated = j.at("evaluated").get<std::size_t>();
  rep.seconds = j.at("seconds").get<double>();
  for (const auto& cj : j.at("candidates")) {
    SweepCandidate c;
    c.edits = cj.at("edits").get<std::vector<std::string>>();
    c.description = cj.at("description").get<std::string>();
    c.peak_reserved = cj.at("peak_reserved").get<std::int64_t>();
    c.peak_allocated = cj.at("peak_allocated").get<std::int64_t>();
    c.saving = cj.at("saving").get<std::int64_t>();
    c.empty_cache_calls = cj.at("empty_cache_calls").get<std::size_t>();
    c.oom = cj.at("oom").get<bool>();
    if (cj.contains("reserved_at_point")) c.reserved_at_point = cj["reserved_at_point"].get<std::int64_t>();
    rep.candidates.push_back(std::move(c));
  }
  return rep;
}

}  // namespace reservoir::replay
