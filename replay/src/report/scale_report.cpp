// `scale` as every front end runs it, and its JSON (scale_report.h): moved here from the command
// line so that Python's reservoir.scale and `reservoir scale` share it.
#include "reservoir/replay/scale_report.h"

#include <fmt/format.h>

#include <map>

#include "reservoir/replay/report_json.h"

namespace reservoir::replay::scale {
namespace {

// The request classes whose size at the target the inputs cannot tell: one entry per class (the
// allocation's innermost frames and the law), with why and the capture that would settle it.
nlohmann::json undeterminedClasses(const Input& tin, const ScaleModel& m) {
  std::map<std::pair<std::string, std::string>, nlohmann::json> classes;
  for (const auto& f : m.requests) {
    if (f.law.determined) continue;
    auto& c = classes[{describeStack(*tin.snapshot, f.stack, 2), f.law.className()}];
    if (c.is_null())
      c = {{"where", describeStack(*tin.snapshot, f.stack, 2)},
           {"law", f.law.className()},
           {"count", 0},
           {"sizes", f.sizes},
           {"predicted", f.predicted},
           {"why", f.law.why_undetermined},
           {"add_capture", f.law.add_capture ? nlohmann::json(*f.law.add_capture) : nlohmann::json(nullptr)}};
    c["count"] = c["count"].get<std::size_t>() + 1;
  }
  nlohmann::json out = nlohmann::json::array();
  for (auto& [k, v] : classes) out.push_back(std::move(v));
  return out;
}

nlohmann::json modelJson(const Scaler& s, const ScaleModel& m, std::size_t max_unexplained) {
  nlohmann::json j;
  const auto& tin = s.inputs()[m.template_input];
  j["template"] = tin.name;
  j["requests"] = m.requests.size();
  j["matched_in_every_input"] = m.matched_everywhere;
  j["laws"] = m.laws;
  j["inexact_at_target"] = m.inexact;
  j["undetermined_at_target"] = m.undetermined;
  // Every size at the target follows from the inputs exactly (no guess, no rounding).
  j["sizes_exact"] = m.inexact == 0 && m.undetermined == 0;
  j["inputs"] = nlohmann::json::array();
  for (std::size_t i = 0; i < s.inputs().size(); ++i)
    j["inputs"].push_back({{"trace", s.inputs()[i].name},
                           {"params", s.inputs()[i].params},
                           {"requests", s.keys(i).size()},
                           {"not_in_template", m.unmatched_per_input[i]}});
  j["unexplained"] = nlohmann::json::array();
  for (const auto& f : m.requests) {
    if (f.law.kind != LawKind::kUnexplained) continue;
    if (j["unexplained"].size() >= max_unexplained) break;
    j["unexplained"].push_back(
        {{"op", f.op}, {"sizes", f.sizes}, {"kept", f.predicted}, {"stack", describeStack(*tin.snapshot, f.stack, 6)}});
  }
  j["undetermined"] = undeterminedClasses(tin, m);
  j["notes"] = m.notes;
  return j;
}

}  // namespace

nlohmann::json undeterminedJson(const Scaler& s, const ScaleModel& m) {
  return undeterminedClasses(s.inputs()[m.template_input], m);
}

Expected<std::pair<std::optional<Params>, std::string>> splitInputSpec(std::string_view spec) {
  using Split = std::pair<std::optional<Params>, std::string>;
  const auto colon = spec.find(':');
  if (colon == std::string_view::npos || spec.substr(0, colon).find('=') == std::string_view::npos)
    return Split{std::nullopt, std::string(spec)};
  auto params = parseParams(spec.substr(0, colon));
  if (!params) return params.status();
  return Split{std::move(*params), std::string(spec.substr(colon + 1))};
}

Expected<std::vector<Params>> parseTargets(const std::vector<std::string>& to) {
  std::vector<Params> targets;
  for (const auto& t : to) {
    auto grid = parseGrid(t);
    if (!grid) return grid.status().prefixed(t + ": ");
    if (targets.size() + grid->size() > kMaxTargets)
      return Status::usage(fmt::format("the targets given are {} and more, past the {} one run may have; give fewer values",
                                       targets.size() + grid->size(), kMaxTargets));
    targets.insert(targets.end(), grid->begin(), grid->end());
  }
  return targets;
}

bool hasEdits(const WhatIfOptions& w) { return !w.edits.empty() || w.settings || w.fraction; }

Expected<TargetResult> runTarget(const Scaler& s, const Params& target, const WhatIfOptions& w) {
  TargetResult r;
  r.asked = target;
  auto model = s.fit(target);
  if (!model) return model.status();
  r.model = std::move(*model);
  auto trace = s.synthesize(r.model);
  if (!trace) return trace.status();
  r.trace = std::move(*trace);
  auto rep = runWhatIf(r.trace.snapshot, r.trace.device_index, r.trace.env, w);
  if (!rep) return Status::error("replaying the predicted trace: " + rep.message());
  r.report = std::move(*rep);
  if (r.report.capacity) {
    WhatIfOptions free = w;
    free.capacity.reset();
    free.overhead = 0;
    auto un = runWhatIf(r.trace.snapshot, r.trace.device_index, r.trace.env, free);
    if (!un) return Status::error("replaying the predicted trace: " + un.message());
    r.unlimited = std::move(*un);
  }
  return r;
}

nlohmann::json targetJson(const Scaler& s, const TargetResult& r, bool edits, std::size_t max_unexplained) {
  const bool capacity_known = r.report.capacity.has_value();
  nlohmann::json j;
  j["target"] = r.model.target;
  j["predicted"] = runJson(*r.trace.snapshot, r.report.baseline);
  j["predicted"]["fits"] = capacity_known ? nlohmann::json(!r.report.baseline.oom) : nlohmann::json(nullptr);
  if (edits) {
    j["whatif"] = runJson(*r.trace.snapshot, r.report.whatif);
    j["whatif"]["fits"] = capacity_known ? nlohmann::json(!r.report.whatif.oom) : nlohmann::json(nullptr);
  }
  j["capacity"] = r.report.capacity ? nlohmann::json(*r.report.capacity) : nlohmann::json(nullptr);
  if (r.unlimited) {  // what the target needs, whatever the capacity
    j["needs"] = {{"peak_reserved", r.unlimited->baseline.peak_reserved.bytes},
                  {"peak_allocated", r.unlimited->baseline.peak_allocated.bytes}};
    if (edits) j["needs"]["whatif_peak_reserved"] = r.unlimited->whatif.peak_reserved.bytes;
  }
  j["model_exact"] = r.report.conformance.exact();
  j["model"] = modelJson(s, r.model, max_unexplained);
  return j;
}

Expected<nlohmann::json> measuredJson(const Scaler& s, const TargetResult& r, const Input& measured) {
  auto cmp = s.compare(r.model, measured);
  if (!cmp) return cmp.status();
  auto rep = runWhatIf(measured.snapshot, measured.device_index, measured.env, {});
  if (!rep) return Status::error(measured.name + ": " + rep.message());
  nlohmann::json j;
  j["trace"] = measured.name;
  j["measured"] = {{"peak_reserved", rep->baseline.peak_reserved.bytes},
                   {"peak_allocated", rep->baseline.peak_allocated.bytes}};
  j["error_peak_reserved"] = r.report.baseline.peak_reserved.bytes - rep->baseline.peak_reserved.bytes;
  j["error_peak_allocated"] = r.report.baseline.peak_allocated.bytes - rep->baseline.peak_allocated.bytes;
  j["requests_compared"] = cmp->compared;
  j["requests_equal"] = cmp->equal;
  j["only_predicted"] = cmp->only_predicted;
  j["only_measured"] = cmp->only_measured;
  j["misses"] = nlohmann::json::array();
  for (const auto& m : cmp->misses)
    j["misses"].push_back({{"where", m.where},
                           {"law", m.law},
                           {"count", m.count},
                           {"bytes", m.bytes},
                           {"example", {{"predicted", m.example_predicted}, {"measured", m.example_measured}}}});
  return j;
}

}  // namespace reservoir::replay::scale
