// The runs a report makes: the recording, the edited run, the named variants, each with the
// probes every row of the table needs (report_internal.h).
#include <fmt/format.h>

#include <algorithm>

#include "report/report_internal.h"

namespace reservoir::replay::detail {
namespace {

// The device (capacity, overhead) is the job's, not an edit: the report's own edits edit something
// when they place edits or change the settings, the fraction or the address model.
bool editsSomething(const WhatIfOptions& o) {
  for (const auto& e : o.edits)
    if (e.kind != Edit::Kind::kProbe && e.kind != Edit::Kind::kDemand) return true;
  return o.settings || o.fraction || o.address_model != AddressModel::kAnchored;
}

// `o` on the report's device where it gives none of its own: the capacity and overhead (every run),
// the fraction (`with_fraction`: the variants; the recording keeps the recorded one).
WhatIfOptions onDevice(WhatIfOptions o, const WhatIfOptions& device, bool with_fraction) {
  if (!o.capacity) o.capacity = device.capacity;
  if (o.overhead == 0) o.overhead = device.overhead;
  if (with_fraction && !o.fraction) o.fraction = device.fraction;
  return o;
}

void addPoint(std::vector<std::string>& points, const std::string& text) {
  if (std::find(points.begin(), points.end(), text) == points.end()) points.push_back(text);
}

// The probe points: every probe given, then every cleanup's and release's point.
std::vector<std::string> probePoints(const std::vector<const WhatIfOptions*>& all) {
  std::vector<std::string> points;
  for (const auto* o : all)
    for (const auto& e : o->edits)
      if (e.kind == Edit::Kind::kProbe) addPoint(points, e.point.text);
  for (const auto* o : all)
    for (const auto& e : o->edits)
      if (e.kind == Edit::Kind::kCleanup || e.kind == Edit::Kind::kRelease) addPoint(points, e.point.text);
  return points;
}

// `o` with a probe at each of `points` it does not probe yet, and `demands` it does not have.
WhatIfOptions withObservations(WhatIfOptions o, const std::vector<std::string>& points,
                               const std::vector<Edit>& demands) {
  std::vector<std::string> have;
  for (const auto& e : o.edits)
    if (e.kind == Edit::Kind::kProbe) have.push_back(e.point.text);
  for (const auto& p : points) {
    if (std::find(have.begin(), have.end(), p) != have.end()) continue;
    auto probe = parseProbe(p);  // a point that parsed once parses again
    if (probe) o.edits.push_back(std::move(*probe));
  }
  for (const auto& d : demands) {
    const bool has = std::any_of(o.edits.begin(), o.edits.end(),
                                 [&](const Edit& e) { return e.kind == Edit::Kind::kDemand && e.text == d.text; });
    if (!has) o.edits.push_back(d);
  }
  o.keep_curves = true;  // the edited run's, compact: the curves and the peak's origin are read from them
  o.analyze_peak = true;
  return o;
}

Status checkNames(const std::vector<ReportVariant>& variants) {
  std::vector<std::string> seen{"recording", "edited"};
  for (const auto& v : variants) {
    if (v.name.empty()) return Status::usage("a variant needs a name: NAME=EDITS");
    for (char c : v.name)
      if (static_cast<unsigned char>(c) < 0x20)
        return Status::usage(fmt::format("variant name '{}': no control characters", v.name));
    if (std::find(seen.begin(), seen.end(), v.name) != seen.end())
      return Status::usage(fmt::format("variant name '{}' is used twice (recording and edited are taken)", v.name));
    seen.push_back(v.name);
  }
  return {};
}

}  // namespace

Expected<std::vector<PlannedRun>> planRuns(const ReportOptions& options, std::vector<std::string>& probes,
                                           std::vector<std::string>& demand_texts) {
  if (Status st = checkNames(options.variants); !st.ok()) return st;
  std::vector<const WhatIfOptions*> all{&options.edited};
  for (const auto& v : options.variants) all.push_back(&v.options);
  probes = probePoints(all);
  std::vector<Edit> demands;  // the report's own demands are asked of every run
  for (const auto* o : all)
    for (const auto& e : o->edits)
      if (e.kind == Edit::Kind::kDemand) addPoint(demand_texts, e.text);
  for (const auto& e : options.edited.edits)
    if (e.kind == Edit::Kind::kDemand) demands.push_back(e);
  std::vector<PlannedRun> runs;
  const WhatIfOptions& device = options.edited;
  runs.push_back({"recording", withObservations(onDevice({}, device, false), probes, demands), {}});
  // The report's own edits are the edited run's, or (only probes and demands) every run's.
  if (editsSomething(options.edited))
    runs.push_back({"edited", withObservations(options.edited, probes, demands), options.edited.edits});
  else
    runs[0].own = options.edited.edits;
  for (const auto& v : options.variants)
    runs.push_back({v.name, withObservations(onDevice(v.options, device, true), probes, demands), v.options.edits});
  return runs;
}

}  // namespace reservoir::replay::detail
