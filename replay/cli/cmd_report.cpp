// reservoir report TRACE... [edits] [--variant NAME=EDITS]... [--sweep] --html OUT.html [--markdown OUT.md] [--json]:
// one page and one table from the library's report (replay/report.h); this file parses and prints only.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "edit_options.h"
#include "reservoir/replay/report.h"
#include "split_words.h"
#include "work_pool.h"

namespace reservoir::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> traces;
  std::optional<std::int64_t> iteration;
  std::optional<std::int64_t> device;
  bool no_capture_json = false;
  EditOptions edits;
  std::vector<std::string> variants;
  bool sweep = false;
  std::string minimize;
  std::size_t top = 10;
  std::size_t max_candidates = 100;
  std::optional<unsigned> jobs;
  std::string html, markdown;
  bool json = false;
};

// NAME=EDITS: EDITS split into words as a shell would (no shell runs) and parsed by whatif's own flags.
Expected<std::pair<std::string, replay::WhatIfText>> parseVariant(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    return Status::usage(
        fmt::format("--variant '{}': expected NAME=EDITS, e.g. 'post-load=--cleanup "
                    "after:state_dict_loader.py:load'",
                    spec));
  const std::string name = spec.substr(0, eq);
  auto words = splitWords(std::string_view(spec).substr(eq + 1));
  if (!words) return Status::usage(fmt::format("--variant {}: {}", name, words.message()));
  CLI::App app{"the edits of a variant"};
  replay::WhatIfText text;
  addEditOptions(&app, &text);
  app.set_help_flag();
  std::vector<std::string> reversed(words->rbegin(), words->rend());  // CLI11 takes them last first
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return Status::usage(
        fmt::format("--variant {}: {} (EDITS are whatif's flags: --cleanup, --release, --probe, "
                    "--demand, --reset-peaks, --set, --capacity, --overhead, --fraction, "
                    "--address-model)",
                    name, e.what()));
  }
  return std::make_pair(name, std::move(text));
}

Expected<replay::ReportText> reportText(const ReportArgs& a, std::ostream& err) {
  replay::ReportText t;
  t.edits = a.edits;
  for (const auto& spec : a.variants) {
    auto v = parseVariant(spec);
    if (!v) return v.status();
    t.variants.push_back(std::move(*v));
  }
  t.sweep = a.sweep;
  t.minimize = a.minimize;
  t.sweep_top = a.top;
  t.max_candidates = a.max_candidates;
  auto jobs = threadCount(a.jobs, err);
  if (!jobs) return Status::usage(jobs.message());
  t.jobs = *jobs;
  return t;
}

void printDone(const ReportArgs& a, const replay::ReportResult& r, std::ostream& out) {
  if (a.json) {
    out << r.json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  out << r.model.verdict << "\n";
  if (!a.html.empty()) out << fmt::format("wrote {} ({} bytes)\n", a.html, r.html.size());
  if (!a.markdown.empty()) out << fmt::format("wrote {} ({} characters)\n", a.markdown, r.markdown.size());
}

int runReport(const ReportArgs& a, std::ostream& out, std::ostream& err) {
  if (a.html.empty() && a.markdown.empty() && !a.json)
    return usage(err, "report needs an output: --html OUT.html, --markdown OUT.md and/or --json");
  auto text = reportText(a, err);
  if (!text) return fail(err, text.status());
  auto paths = expandTraceList(a.traces, a.iteration);
  if (!paths) return fail(err, paths.status());
  std::vector<replay::Trace> traces;
  for (const auto& path : *paths) {
    auto t = loadTrace(path, paths->size() == 1 ? err : nullStream(), !a.no_capture_json);
    if (!t) return fail(err, t.status());
    traces.push_back(std::move(*t));
  }
  if (Status st = replay::checkReportTargets(traces, a.html, a.markdown, "--html", "--markdown"); !st.ok())
    return fail(err, st);
  Progress progress(err, "replaying");
  auto result =
      replay::makeReport(traces, *text, a.device, {}, cliWording(),
                         [&](std::string_view, std::size_t done, std::size_t total) { progress(done, total); });
  if (!result) return fail(err, result.status());
  if (Status st = replay::writeReportFiles(*result, traces, a.html, a.markdown, "--html", "--markdown"); !st.ok())
    return fail(err, st);
  printDone(a, *result, out);
  return kOk;
}

}  // namespace

void registerReport(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "One self-contained HTML page and a Markdown table (for a PR comment) of the recording, the edited run "
      "and each --variant, over one or several ranks");
  cmd->add_option("traces", args->traces, "snapshot pickle(s), e.g. one per rank, @LIST (one path a line) or a glob")
      ->required();
  addIterationOption(cmd, &args->iteration);
  cmd->add_option("--variant", args->variants,
                  "another run: NAME=EDITS, EDITS whatif's flags as one string, e.g. 'post-load=--cleanup "
                  "after:state_dict_loader.py:load' (repeatable)");
  cmd->add_flag("--sweep", args->sweep, "add the sweep: where empty_cache belongs, with its Pareto front");
  cmd->add_option("--minimize", args->minimize, "the sweep's objective: peak (default), reserved:POINT, peak-in:NAME");
  cmd->add_option("--top", args->top, "sweep candidates listed (default 10)");
  cmd->add_option("--max-candidates", args->max_candidates, "sweep candidates replayed (default 100)");
  cmd->add_option("--jobs", args->jobs, "the sweep's threads (default: the number of cores)");
  cmd->add_option("--html", args->html, "write the page here (one file, opens offline)");
  cmd->add_option("--markdown", args->markdown, "write the table here (GitHub Markdown, at most 65536 characters)");
  cmd->add_flag("--json", args->json, "print the report's figures as JSON");
  cmd->add_option("--device", args->device, "CUDA device number (default: the one with the most events)");
  cmd->add_flag("--no-capture-json", args->no_capture_json, "ignore X.json beside X.pickle");
  addEditOptions(cmd, &args->edits);
  cmd->footer(
      "The edits above are the edited run's (reported as 'edited' when it edits anything). --capacity and --overhead "
      "are every run's device, --fraction every variant's, where a --variant gives none; --probe and --demand apply "
      "to every run, and every cleanup's and release's point is probed in every run. docs/ci.md shows CI jobs.");
  cmd->callback([args, set_result, &out, &err] { set_result(runReport(*args, out, err)); });
}

}  // namespace reservoir::cli
