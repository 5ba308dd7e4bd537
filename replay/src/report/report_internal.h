// Pieces of the report shared by its building and its renderings (not part of the API).
#pragma once

#include <string>
#include <vector>

#include "reservoir/replay/event_times.h"
#include "reservoir/replay/report.h"

namespace reservoir::replay::detail {

// One run to make on every rank: the variant's name and its options (probes and the report's
// demands added, the timeline and the peak analysis asked for).
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
