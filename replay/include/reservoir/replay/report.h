// The report of a job's ranks under variants of edits (`reservoir report`, and the model the GUI
// renders): one structured model, built once from the library's results (the what-if reports the
// JSON is made from, the sweep), and its renderings: a self-contained HTML page, a Markdown table
// for a pull request, JSON. No rendering parses another's text; each reads this model.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reservoir/core/status.h"
#include "reservoir/replay/option_text.h"
#include "reservoir/replay/peak_explain.h"
#include "reservoir/replay/sweep.h"
#include "reservoir/replay/trace.h"
#include "reservoir/replay/whatif.h"
#include "reservoir/replay/wording.h"

namespace reservoir::replay {

// ---- What to report ----------------------------------------------------------------------

// A run to report besides the recording: a name and its edits (whatif's options). The report's
// own capacity and overhead are the device of every run (the recording's too), its fraction that of
// every variant, where a variant gives none of its own. Probes and demands given with the report's
// own edits apply to every run; probes of any variant and the points of every variant's cleanups
// and releases are probed in every run, so that the table has reserved at each of them in every row.
struct ReportVariant {
  std::string name;
  WhatIfOptions options;
};

struct ReportOptions {
  // The edited run (the report's own edits), reported as the variant "edited" when it edits
  // anything (places cleanups, releases or peak resets, or sets the settings, the fraction or the
  // address model; a capacity and an overhead are the device of every run).
  WhatIfOptions edited;
  std::vector<ReportVariant> variants;  // names unique, not "recording" or "edited"
  std::optional<SweepOptions> sweep;    // a sweep on the edited run's device (its EditedRunOptions)
  std::size_t sweep_top = 10;           // candidates listed
  std::size_t columns = 2000;           // curve columns per axis (min and max of each)
  std::size_t max_marks = 400;          // annotation marks kept per rank, edit marks per run
  std::function<void(std::string_view what, std::size_t done, std::size_t total)> progress;  // per run made
  const std::atomic<bool>* cancel = nullptr;  // looked at before each run (and by the sweep): stops with an error
};

// One rank: the trace, its device and the environment it is replayed in.
struct ReportInput {
  Trace trace;
  std::size_t device_index = 0;
  ReplayEnvironment env;
};

// ---- The model ---------------------------------------------------------------------------

// Curves are step series decimated to columns: column c of an axis covers positions
// [begin + c * span / columns, begin + (c + 1) * span / columns), span = end - begin, and holds the
// least and the largest value the series takes there (the value carried in from the left included).
struct CurveAxis {
  enum class Kind : std::uint8_t { kEvents, kTime };
  Kind kind = Kind::kEvents;
  std::int64_t begin = 0, end = 0;  // event indices, or microseconds
  std::size_t columns = 0;
  [[nodiscard]] std::int64_t columnBegin(std::size_t c) const;
};
struct Curve {
  std::vector<std::int64_t> min, max;  // per column
};
// Decimates the step series `value[i]` (taken at position `at[i]`, nondecreasing; `start` before
// the first) over `axis`. Exact: the extremes per column of the series itself.
Curve decimateSteps(std::span<const std::int64_t> at, std::span<const std::int64_t> value, std::int64_t start,
                    const CurveAxis& axis);

struct RunCurves {
  Curve reserved, allocated;
};

// A mark on a rank's curves: an annotation's start or end, or where an edit of a run applies.
struct ReportMark {
  enum class Kind : std::uint8_t { kAnnotationStart, kAnnotationEnd, kEdit };
  Kind kind = Kind::kEdit;
  std::uint32_t event = 0;  // the event boundary (the mark lies before this event)
  std::int64_t time_us = 0;
  std::string label;  // the annotation's name, or the edit as given
};

// The cell of a probe column: reserved where the point is reached (the largest, when reached
// several times, and how many times).
struct ProbeCell {
  std::size_t occurrences = 0;  // 0: not reached in this run
  std::int64_t reserved = 0;
};

// The cell of a demand column: whether another process's demand fits where its point is reached
// (every time: the least free bytes over the times it is reached).
struct DemandCell {
  std::size_t occurrences = 0;  // 0: not asked of this run, or its point not reached
  bool capacity_known = false;
  bool fits = true;
  std::int64_t least_free = 0;
};

// One variant on one rank.
struct ReportRun {
  WhatIfReport report;  // runs[0] of a rank is the recording: its `whatif` is the unedited replay
  PeakOrigin reserved_origin, allocated_origin;  // of report.whatif
  std::optional<CachePins> pins;                 // at report.whatif's peak reserved
  RunCurves by_event, by_time;
  std::vector<ReportMark> edit_marks;  // at most ReportOptions::max_marks
  std::size_t edit_points = 0;         // every gap the edits apply at
  std::vector<ProbeCell> probes;       // per Report::probes
  std::vector<DemandCell> demands;     // per Report::demands
  [[nodiscard]] const RunResult& run() const { return report.whatif; }
};

// What a rank's trace is: the facts every page shows beside the figures.
struct ReportAnomaly {
  std::string name, severity, description;
  std::size_t count = 0;
};
struct ReportFacts {
  std::string path;
  std::uint64_t file_bytes = 0;
  std::int64_t device = 0;
  std::size_t devices = 0;
  std::size_t events = 0;
  bool complete = true;
  std::int64_t first_time_us = 0, last_time_us = 0;
  std::size_t allocations = 0, frames = 0, stacks = 0, annotations = 0;
  std::string recorded_settings;                // the recorded PYTORCH_CUDA_ALLOC_CONF
  std::optional<std::size_t> divergence_event;  // where the model departs from the recording
  bool layout_exact = true;                     // the final segments are the snapshot's
  std::vector<ReportAnomaly> anomalies;
};

struct ReportRank {
  Trace trace;  // keeps the snapshot the stacks name
  std::size_t device_index = 0;
  ReportFacts facts;
  CurveAxis by_event, by_time;
  std::vector<ReportMark> annotations;  // at most ReportOptions::max_marks, in time order
  std::size_t annotation_count = 0;     // of this device
  std::vector<ReportRun> runs;          // per Report::variants
};

struct ReportVariantInfo {
  std::string name;
  std::string edits;           // in words (describeEdits), "no edits" for the recording
  std::string verdict;         // whatIfVerdict of its worst rank; for the recording, its peaks
  std::size_t worst_rank = 0;  // the largest peak reserved (ties: the first)
};

struct Report {
  std::vector<ReportVariantInfo> variants;  // [0] the recording, then "edited", then the named ones
  std::vector<std::string> probes;          // the probe points, in table order
  std::vector<std::string> demands;         // the demands as given (BYTES@POINT), in table order
  std::vector<ReportRank> ranks;
  std::size_t worst_rank = 0;  // the rank with the largest peak reserved in any run
  std::string verdict;         // the headline sentence
  std::optional<SweepReport> sweep;
  std::size_t sweep_top = 10;
};

// Runs every variant on every rank (and the sweep) and builds the model. An edit that names
// nothing in a rank is an error naming the rank and the variant.
Expected<Report> buildReport(const std::vector<ReportInput>& inputs, const ReportOptions& options);
// The same on one rank whose trace is already prepared in input.env (the GUI's session): runs
// whose device needs the same environment replay `prepared` instead of preparing it again.
Expected<Report> buildReportOn(const ReportInput& input, const PreparedTrace& prepared, const ReportOptions& options);

// ---- The table (the Markdown's, and the JSON's "table") ---------------------------------

struct ReportRow {
  std::size_t variant = 0, rank = 0;
  std::vector<ProbeCell> probes;
  std::vector<DemandCell> demands;
  std::int64_t peak_allocated = 0, peak_reserved = 0;
  // Against the recording on the same rank (0 on the recording's rows).
  std::vector<std::optional<std::int64_t>> probe_change;  // when both runs reach the point
  std::int64_t peak_allocated_change = 0, peak_reserved_change = 0;
  bool worst = false;  // the variant's worst rank (several ranks)
  std::optional<std::uint32_t> oom_event;
};
// One row per variant and rank (variant-major).
std::vector<ReportRow> reportTable(const Report& report);

// ---- Renderings -------------------------------------------------------------------------

// GitHub-flavoured Markdown for a pull-request comment: the verdict line, the table, one line per
// variant's verdict; at most kMarkdownLimit characters (per-rank rows give way to the worst rank's
// when they would not fit, with a line that says so).
inline constexpr std::size_t kMarkdownLimit = 65536;
std::string reportMarkdown(const Report& report);
// One self-contained page (inline CSS and JavaScript, no request off the machine).
std::string reportHtml(const Report& report);
// The model as JSON: per variant and rank the what-if report (whatIfJson) with its peak origin and
// pins, the table, the facts, the sweep (sweepJson).
nlohmann::json reportJson(const Report& report);

// ---- One call for every front end -------------------------------------------------------

// The report's options as text, as the CLI's flags and the Python package's keywords give them.
struct ReportText {
  WhatIfText edits;  // the edited run
  std::vector<std::pair<std::string, WhatIfText>> variants;
  bool sweep = false;
  std::string minimize;  // the sweep's objective (parseSweepObjective); empty: peak
  std::size_t sweep_top = 10;
  std::size_t max_candidates = 100;
  unsigned jobs = 0;  // the sweep's threads; 0: every core
};
// Parses the text (errors name the option as `wording` words it, a variant's with its name) into options.
Expected<ReportOptions> parseReportOptions(const ReportText& text, const Wording& wording = plainWording());

struct ReportResult {
  Report model;
  nlohmann::json json;
  std::string html, markdown;
};
// Reads nothing: the traces are loaded (readTrace / readTraceBytes); each is replayed on its
// busiest device (or `device`), in its capture's environment with `recorded` over it.
using ReportProgress = std::function<void(std::string_view what, std::size_t done, std::size_t total)>;
Expected<ReportResult> makeReport(const std::vector<Trace>& traces, const ReportText& text,
                                  std::optional<std::int64_t> device = std::nullopt,
                                  const RecordedDeviceText& recorded = {},
                                  const Wording& wording = plainWording(), ReportProgress progress = {},
                                  const std::atomic<bool>* cancel = nullptr);

// The report's outputs checked as every command's (checkOutputTargets): never a trace, a capture
// JSON a trace was read with (beside it or from elsewhere), or one output over the other. Front
// ends call it before the replay work; writeReportFiles calls it again.
Status checkReportTargets(const std::vector<Trace>& traces, const std::string& html_path,
                          const std::string& markdown_path, const std::string& html_label = "html",
                          const std::string& markdown_label = "markdown");

// Writes the renderings (an empty path: not written) after checkReportTargets.
Status writeReportFiles(const ReportResult& result, const std::vector<Trace>& traces, const std::string& html_path,
                        const std::string& markdown_path, const std::string& html_label = "html",
                        const std::string& markdown_label = "markdown");

}  // namespace reservoir::replay
