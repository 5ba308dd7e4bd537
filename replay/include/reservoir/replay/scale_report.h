// `scale` as every front end runs it (the CLI's `reservoir scale`, Python's reservoir.scale):
// the inputs named as "[NAME=VALUE,...:]TRACE", one target fitted, synthesized and replayed with
// the what-if edits (and, with a capacity, without one: what the target needs), the prediction
// against a measured capture, and the JSON each front end returns (`scale --json`).
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "reservoir/core/status.h"
#include "reservoir/replay/scale.h"
#include "reservoir/replay/whatif.h"

namespace reservoir::replay::scale {

// "world=2,seq=4096:A.pickle" -> ({world: 2, seq: 4096}, "A.pickle"); "A.pickle" -> (none,
// "A.pickle"): the parameters come from the capture's sidecar (paramsFromCaptureJson). A prefix
// before the first ':' without '=' is part of the path. Errors name no option.
Expected<std::pair<std::optional<Params>, std::string>> splitInputSpec(std::string_view spec);

// The targets of `to` texts ("world=8,16,seq=4096"; value lists make a grid), in order.
Expected<std::vector<Params>> parseTargets(const std::vector<std::string>& to);

// True when the edits change the run (edits, settings or a fraction): the rows then show the
// edited run beside the prediction.
bool hasEdits(const WhatIfOptions& options);

// One target fitted, synthesized and replayed.
struct TargetResult {
  Params asked;  // as given
  ScaleModel model;
  ScaledTrace trace;
  WhatIfReport report;                    // on the given device (capacity, overhead)
  std::optional<WhatIfReport> unlimited;  // with a capacity: the same runs without one (what it needs)
};
Expected<TargetResult> runTarget(const Scaler& scaler, const Params& target, const WhatIfOptions& options);

// One target's row of `scale --json` (the whole answer for one target, without "out" and
// "check"); `max_unexplained`: unexplained requests listed.
nlohmann::json targetJson(const Scaler& scaler, const TargetResult& r, bool edits, std::size_t max_unexplained);

// The request classes the inputs cannot tell at the target ("undetermined" of the model's JSON):
// per class its frames, law, count, why, and add_capture (the parameters of a capture that would
// settle it, or null).
nlohmann::json undeterminedJson(const Scaler& scaler, const ScaleModel& model);

// The prediction against a capture of the target (`measured`, prepared as an input with no
// parameters): peaks and request by request ("check" of `scale --json`).
Expected<nlohmann::json> measuredJson(const Scaler& scaler, const TargetResult& r, const Input& measured);

}  // namespace reservoir::replay::scale
