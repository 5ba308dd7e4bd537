// Pieces of the report shared by its building and its renderings (not part of the API).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "reservoir/replay/event_times.h"
#include "reservoir/replay/report.h"

namespace reservoir::replay::detail {

// decimateSteps over values read by index: `at(i)` the position of value i (nondecreasing),
// `value(i)` the value, for i < n (a run's compact curves are read in place).
template <typename At, typename Value>
Curve decimateStepsBy(std::size_t n, At at, Value value, std::int64_t start, const CurveAxis& axis) {
  Curve c;
  c.min.resize(axis.columns);
  c.max.resize(axis.columns);
  std::size_t i = 0;
  std::int64_t current = start;
  for (; i < n && at(i) < axis.begin; ++i) current = value(i);  // before the axis: only what it carries in
  for (std::size_t col = 0; col < axis.columns; ++col) {
    const std::int64_t lo = axis.columnBegin(col), hi = axis.columnBegin(col + 1);
    std::int64_t least = std::numeric_limits<std::int64_t>::max(), most = std::numeric_limits<std::int64_t>::min();
    if (i >= n || at(i) > lo) least = most = current;  // the value carried in holds at the column's start
    for (; i < n && at(i) < hi; ++i) {
      current = value(i);
      least = std::min(least, current);
      most = std::max(most, current);
    }
    if (least > most) least = most = current;  // an empty column of zero width (hi == lo)
    c.min[col] = least;
    c.max[col] = most;
  }
  return c;
}

// One run to make on every rank: the variant's name and its options (probes and the report's
// demands added, the edited run's curves and the peak analysis asked for).
struct PlannedRun {
  std::string name;
  WhatIfOptions options;
  std::vector<Edit> own;  // the edits the variant gave (an error in one of them names the variant)
};
// The recording, the edited run when it edits anything, the named variants; `probes` and `demands`
// receive the probe points and the demands in table order.
Expected<std::vector<PlannedRun>> planRuns(const ReportOptions& options, std::vector<std::string>& probes,
                                           std::vector<std::string>& demands);

// A rank's facts, axes and annotation marks (report_facts.cpp).
ReportFacts reportFacts(const ReportInput& input, const PreparedTrace& prepared);
void fillAxes(const traces::DeviceTrace& trace, const EventTimes& times, std::size_t columns, ReportRank& rank);
void fillAnnotations(const traces::Snapshot& snap, const traces::DeviceTrace& trace, const EventTimes& times,
                     std::size_t max_marks, ReportRank& rank);

// The verdicts: each variant's (its worst rank) and the headline.
void fillVerdicts(Report& report);

// Sizes as the CLI prints them ("6.86 GiB", "-2.71 GiB").
std::string sizeWords(std::int64_t bytes);
// A change: "+1.00 GiB", "-2.71 GiB", "same".
std::string changeWords(std::int64_t delta);
// A table cell: the value, and its change against the recording on rows that are not the recording's.
std::string withChangeWords(const std::string& value, std::optional<std::int64_t> change, bool recording);
// A probe cell: "4.14 GiB (-2.71 GiB)", "6.86 GiB (max of 3)", "not reached".
std::string probeCellWords(const ProbeCell& cell, std::optional<std::int64_t> change, bool recording);
// A demand cell: "fits (139.00 GiB free)", "does NOT fit (136.34 GiB free)", "capacity unknown", "-".
std::string demandCellWords(const DemandCell& cell);
// The peak reserved cell, with its out-of-memory.
std::string peakCellWords(const ReportRow& row);
// The flags of a sweep candidate as one shell-quoted line ("--cleanup 'after:x.py:f'").
std::string shellLine(const std::vector<std::string>& words);

}  // namespace reservoir::replay::detail
