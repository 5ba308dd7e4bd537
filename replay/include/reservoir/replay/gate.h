// The CI gate's verdict: from the what-if reports of one or more traces (ranks) and the
// conditions (a budget on peak reserved, every demand of another process, no out-of-memory under
// the capacity), each condition's verdict per trace, the worst trace and a one-line reason.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reservoir/core/status.h"
#include "reservoir/replay/whatif.h"
#include "reservoir/replay/wording.h"

namespace reservoir::replay {

struct GateConditions {
  std::optional<sim::ByteCount> max_peak_reserved;  // the edited run's peak reserved must not exceed it
  std::vector<Edit> demands;                        // kDemand edits: each must fit wherever its point is reached
  bool no_oom = true;                               // the edited run must not run out of memory
  std::optional<double> fraction;                   // the edited run's memory fraction, when one was set (for reasons)
  const Wording* wording = nullptr;                 // how reasons name an input to give (null: plain words)
};

// True when at least one condition is asked for: a budget, a demand, or (`capacity_given`: the
// caller set --capacity or --fraction) the out-of-memory check.
bool hasCondition(const GateConditions& conditions, bool capacity_given);

enum class Verdict : std::uint8_t {
  kPass,
  kFail,
  kUnknown,  // a demand where the capacity is unknown: it cannot be judged
};
std::string_view verdictName(Verdict v);  // "pass", "fail", "unknown"

// One condition on one trace.
struct TraceVerdict {
  std::size_t trace = 0;  // index into the reports
  Verdict verdict = Verdict::kPass;
  std::int64_t value = 0;   // peak: peak reserved; demand: the least free bytes at its point; oom: the size
  std::uint32_t event = 0;  // peak: event of the peak; oom: event of the failed malloc
  std::size_t count = 0;    // demand: times its point was reached; oom: failed mallocs
  std::optional<sim::ByteCount> capacity;  // usable device memory (before overhead), when known
};

struct ConditionVerdict {
  enum class Kind : std::uint8_t { kPeakReserved, kDemand, kOom };
  Kind kind = Kind::kPeakReserved;
  std::string text;        // the demand as given ("138GiB@after:offload.py:offload")
  std::string point;       // demand: the point's text
  std::int64_t limit = 0;  // peak: the budget; demand: the bytes asked for
  Verdict verdict = Verdict::kPass;
  std::size_t worst = 0;  // the trace that decides (largest peak, least free, first OOM)
  std::vector<TraceVerdict> traces;
  std::string reason;            // one line, naming the worst trace
  std::optional<Input> missing;  // what would let an undecided condition be judged (a capacity)
};
std::string_view conditionKindName(ConditionVerdict::Kind k);  // "peak_reserved", "demand", "oom"

struct GateInput {
  std::string name;  // the trace's path, as it is named in reasons
  const WhatIfReport* report = nullptr;
};

struct GateVerdict {
  bool pass = true;
  bool undecided = false;  // some condition could not be judged (a demand without a capacity)
  std::vector<ConditionVerdict> conditions;
  std::size_t worst_trace = 0;   // the failing condition's worst trace, else the one with the largest peak
  std::string reason;            // the first failing (else undecided) condition's reason; empty on a pass
  std::optional<Input> missing;  // undecided: what the undecided condition lacks (a capacity)
  std::string summary;           // one line: every condition's reason (for a pass)
  // Traces that gave no report (unreadable, nothing to replay: addUnjudgedTraces); the conditions
  // above judge only the others.
  std::vector<std::string> unjudged;
};

// The verdict of every condition on every trace (the edited run, `report.whatif`). Out of
// memory is checked first, then the demands in order, then the peak budget.
Expected<GateVerdict> judgeGate(const std::vector<GateInput>& traces, const GateConditions& conditions);

// The verdict over the traces read, when `names` (others of the same gate) gave no report: never
// a pass, since they were not judged. Without a failure among the traces read, the reason says
// how many were not judged (and the first one) and what the others gave.
void addUnjudgedTraces(GateVerdict& verdict, const std::vector<std::string>& names);

}  // namespace reservoir::replay
