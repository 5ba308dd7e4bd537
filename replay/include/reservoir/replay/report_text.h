// The reports as text for people: what `reservoir whatif` and `reservoir sweep` print and the
// GUI's what-if panel and sweep dialog show (one renderer, so they cannot drift apart). No
// text here names a command-line flag: the GUI shows it too.
#pragma once

#include <string>

#include "reservoir/replay/sweep.h"
#include "reservoir/replay/whatif.h"

namespace reservoir::replay {

// One sentence that says what the edits did, e.g. "empty_cache after state_dict_loader.py:load:
// reserved there 6.86 -> 4.14 GiB; run peak unchanged at 25.33 GiB (event 4564)". The first
// line of whatIfReportText, and "verdict" in the what-if JSON.
std::string whatIfVerdict(const WhatIfReport& rep);
// The first figure of `run` at the point of `edit` (a cleanup or a release; RunResult::at_edits),
// or null: the edit applies nowhere, or measures nothing (a probe, a demand, a reset).
const EditFigure* firstEditFigure(const RunResult& run, const Edit& edit);
// The edits in words: "empty_cache after state_dict_loader.py:load", "settings
// expandable_segments:True", "no edits".
std::string describeEdits(const WhatIfReport& rep);
// A point in words: "after state_dict_loader.py:load", "at the start of ProfilerStep", "after event 12".
std::string describePoint(const std::string& point_text);

// The what-if report in words. `recorded`: `snap` is a recording (a trace scale predicted is not:
// its baseline is compared with no recording).
std::string whatIfReportText(const traces::Snapshot& snap, const WhatIfReport& rep, const std::string& path,
                             bool recorded = true);

// The sweep's ranking: the cap and objective, the best `top` candidates, and the Pareto view
// (saving against price).
std::string sweepReportText(const SweepReport& rep, const std::string& path, std::size_t top);
// "~14.2 ms", "~1.3 s", "0" (settings).
std::string priceText(double seconds);
// Calls per training step as a person reads them: "2 per step", "0.5 per step", "1 every 150
// steps" (rather than 0.00667), "none".
std::string perStepWords(double calls_per_step);
// A candidate's price: "~14.2 ms", with its price per step when steps are known ("14.2 ms in all,
// 0.1 ms per step"); a settings candidate's is "0". The CLI's and the HTML report's sweep tables.
std::string candidatePriceWords(const SweepCandidate& c);
// Command-line words as one line a POSIX shell reads back as the same words (a candidate's
// edits: "--cleanup after:x.py:load --set 'expandable_segments:True,...'").
std::string shellWords(const std::vector<std::string>& words);

}  // namespace reservoir::replay
