// The sweep's ranking as JSON (`reservoir sweep --json`).
#include "reservoir/replay/report_json.h"

namespace reservoir::replay {
namespace {

nlohmann::json changesJson(const std::vector<CandidateChange>& changes) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& ch : changes) {
    nlohmann::json one{{"kind", candidateChangeKindName(ch.kind)}};
    if (ch.kind == CandidateChange::Kind::kCleanup)
      one["point"] = ch.point;
    else
      one["settings"] = ch.settings;
    j.push_back(std::move(one));
  }
  return j;
}

std::vector<CandidateChange> changesFromJson(const nlohmann::json& j) {
  std::vector<CandidateChange> changes;
  for (const auto& one : j) {
    CandidateChange ch;
    ch.kind = one.at("kind").get<std::string>() == "settings" ? CandidateChange::Kind::kSettings
                                                              : CandidateChange::Kind::kCleanup;
    if (ch.kind == CandidateChange::Kind::kCleanup)
      ch.point = one.at("point").get<std::string>();
    else
      ch.settings = one.at("settings").get<std::string>();
    changes.push_back(std::move(ch));
  }
  return changes;
}

nlohmann::json candidateJson(const SweepCandidate& c) {
  nlohmann::json cj = {{"edits", c.edits},
                       {"changes", changesJson(c.changes)},
                       {"description", c.description},
                       {"peak_reserved", c.peak_reserved},
                       {"peak_allocated", c.peak_allocated},
                       {"objective_value", c.objective_value},
                       {"saving", c.saving},
                       {"empty_cache_calls", c.empty_cache_calls},
                       {"price_seconds", c.price_seconds},
                       {"mean_reserved", c.mean_reserved},
                       {"depth", c.depth == kAnnotationDepth ? nlohmann::json(nullptr) : nlohmann::json(c.depth)},
                       {"settings", c.settings},
                       {"within_cap", c.within_cap},
                       {"pareto", c.pareto},
                       {"oom", c.oom}};
  cj["calls_per_step"] = c.calls_per_step ? nlohmann::json(*c.calls_per_step) : nlohmann::json(nullptr);
  cj["price_per_step_seconds"] =
      c.price_per_step_seconds ? nlohmann::json(*c.price_per_step_seconds) : nlohmann::json(nullptr);
  if (c.reserved_at_point) cj["reserved_at_point"] = *c.reserved_at_point;
  if (c.peak_in) cj["peak_in"] = *c.peak_in;
  return cj;
}

}  // namespace

nlohmann::json sweepJson(const SweepReport& rep, const std::string& path, std::size_t top) {
  nlohmann::json j;
  nameTrace(j, path);
  j["objective"] = rep.objective;
  j["minimize"] = rep.objective_spec.text();
  // The point a reserved:POINT objective probes (a what-if's probe there shows the same figure).
  j["objective_point"] = rep.objective_spec.kind == SweepObjective::Kind::kReservedAt && rep.objective_spec.point
                             ? nlohmann::json(rep.objective_spec.point->text)
                             : nlohmann::json(nullptr);
  j["baseline_peak_reserved"] = rep.baseline_peak_reserved;
  j["baseline_peak_allocated"] = rep.baseline_peak_allocated;
  j["baseline_objective"] = rep.baseline_objective;
  if (rep.baseline_reserved_at_point) j["baseline_reserved_at_point"] = *rep.baseline_reserved_at_point;
  j["steps"] =
      rep.steps ? nlohmann::json{{"count", rep.steps->count}, {"source", rep.steps->source}} : nlohmann::json(nullptr);
  j["max_calls"] = rep.max_calls ? nlohmann::json(*rep.max_calls) : nlohmann::json(nullptr);
  j["max_calls_source"] = rep.max_calls_source;
  j["evaluated"] = rep.evaluated;
  j["replays"] = rep.replays;
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

nlohmann::json sweepJson(const SweepReport& rep, const std::vector<std::string>& paths, std::size_t top) {
  if (paths.size() == 1) return sweepJson(rep, paths[0], top);
  nlohmann::json j = sweepJson(rep, std::string(), top);
  j.erase("trace");
  j["traces"] = paths;
  // Each trace's rank where its file's name gives one (null for the others), beside "traces".
  nlohmann::json ranks = nlohmann::json::array();
  bool any = false;
  for (const auto& p : paths) {
    const nlohmann::json named = traceNamed(p);
    any = any || named.contains("rank");
    ranks.push_back(named.contains("rank") ? named["rank"] : nlohmann::json(nullptr));
  }
  if (any) j["ranks"] = ranks;
  j["scored_as"] = "worst trace: each candidate's largest objective over the traces";
  return j;
}

namespace {

template <typename T>
std::optional<T> optionalField(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<T>();
}

SweepCandidate candidateFromJson(const nlohmann::json& cj) {
  SweepCandidate c;
  c.edits = cj.at("edits").get<std::vector<std::string>>();
  c.changes = changesFromJson(cj.at("changes"));
  c.description = cj.at("description").get<std::string>();
  c.peak_reserved = cj.at("peak_reserved").get<std::int64_t>();
  c.peak_allocated = cj.at("peak_allocated").get<std::int64_t>();
  c.reserved_at_point = optionalField<std::int64_t>(cj, "reserved_at_point");
  c.peak_in = optionalField<std::int64_t>(cj, "peak_in");
  c.objective_value = cj.at("objective_value").get<std::int64_t>();
  c.saving = cj.at("saving").get<std::int64_t>();
  c.empty_cache_calls = cj.at("empty_cache_calls").get<std::size_t>();
  c.calls_per_step = optionalField<double>(cj, "calls_per_step");
  c.price_seconds = cj.at("price_seconds").get<double>();
  c.price_per_step_seconds = optionalField<double>(cj, "price_per_step_seconds");
  c.mean_reserved = cj.at("mean_reserved").get<double>();
  c.depth = cj.at("depth").is_null() ? kAnnotationDepth : cj.at("depth").get<std::uint32_t>();
  c.settings = cj.at("settings").get<bool>();
  c.within_cap = cj.at("within_cap").get<bool>();
  c.pareto = cj.at("pareto").get<bool>();
  c.oom = cj.at("oom").get<bool>();
  return c;
}

}  // namespace

SweepReport sweepReportFromJson(const nlohmann::json& j) {
  SweepReport rep;
  auto objective = parseSweepObjective(j.at("minimize").get<std::string>());
  if (objective) rep.objective_spec = std::move(*objective);
  rep.objective = j.at("objective").get<std::string>();
  rep.baseline_peak_reserved = j.at("baseline_peak_reserved").get<std::int64_t>();
  rep.baseline_peak_allocated = j.at("baseline_peak_allocated").get<std::int64_t>();
  rep.baseline_objective = j.at("baseline_objective").get<std::int64_t>();
  rep.baseline_reserved_at_point = optionalField<std::int64_t>(j, "baseline_reserved_at_point");
  if (j.contains("steps") && !j["steps"].is_null())
    rep.steps = TrainingSteps{j["steps"].at("count").get<std::size_t>(), j["steps"].at("source").get<std::string>()};
  rep.max_calls = optionalField<std::size_t>(j, "max_calls");
  rep.max_calls_source = j.at("max_calls_source").get<std::string>();
  rep.evaluated = j.at("evaluated").get<std::size_t>();
  rep.replays = optionalField<std::size_t>(j, "replays").value_or(rep.evaluated);
  rep.seconds = j.at("seconds").get<double>();
  rep.cancelled = j.at("cancelled").get<bool>();
  for (const auto& cj : j.at("candidates")) rep.candidates.push_back(candidateFromJson(cj));
  for (const auto& pj : j.at("pareto")) rep.pareto.push_back(pj.at("rank").get<std::size_t>() - 1);
  return rep;
}

}  // namespace reservoir::replay
