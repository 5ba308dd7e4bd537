// The report's one call for every front end (report.h): options from text, the model and its
// renderings, and writing them.
#include <fmt/format.h>

#include "reservoir/replay/output_targets.h"
#include "reservoir/replay/report.h"
#include "reservoir/traces/writer.h"

namespace reservoir::replay {

Expected<ReportOptions> parseReportOptions(const ReportText& text, const Wording& wording) {
  ReportOptions o;
  auto edited = parseWhatIfOptions(text.edits, wording);
  if (!edited) return edited.status();
  o.edited = std::move(*edited);
  for (const auto& [name, edits] : text.variants) {
    auto v = parseWhatIfOptions(edits, wording);
    if (!v) return Status::usage(fmt::format("variant {}: {}", name, v.message()));
    o.variants.push_back({name, std::move(*v)});
  }
  if (text.sweep) {
    SweepOptions s;
    static_cast<EditedRunOptions&>(s) = static_cast<const EditedRunOptions&>(o.edited);
    auto objective = parseSweepObjective(text.minimize);
    if (!objective) return Status::usage(fmt::format("{}: {}", wording.label(Input::kMinimize), objective.message()));
    s.objective = std::move(*objective);
    s.max_candidates = text.max_candidates;
    s.jobs = text.jobs;
    o.sweep = std::move(s);
  }
  o.sweep_top = text.sweep_top;
  return o;
}

Expected<ReportResult> makeReport(const std::vector<Trace>& traces, const ReportText& text,
                                  std::optional<std::int64_t> device, const RecordedDeviceText& recorded,
                                  const Wording& wording, ReportProgress progress,
                                  const std::atomic<bool>* cancel) {
  auto options = parseReportOptions(text, wording);
  if (!options) return options.status();
  options->progress = std::move(progress);
  options->cancel = cancel;
  if (options->sweep) options->sweep->cancel = cancel;
  std::vector<ReportInput> inputs;
  for (const Trace& t : traces) {
    if (auto none = nothingToReplay(t.snap()); none && !device) return Status::error(t.path + ": " + *none);
    auto dev = chooseDevice(t.snap(), device);
    if (!dev) return Status::error(t.path + ": " + dev.message());
    if (auto none = nothingToReplay(t.snap(), *dev)) return Status::error(t.path + ": " + *none);
    auto env = replayEnvironment(t, recorded, wording);
    if (!env) return env.status();
    inputs.push_back({t, *dev, std::move(*env)});
  }
  auto model = buildReport(inputs, *options);
  if (!model) return model.status();
  ReportResult r;
  r.model = std::move(*model);
  r.json = reportJson(r.model);
  r.markdown = reportMarkdown(r.model);
  r.html = reportHtml(r.model);
  return r;
}

Status checkReportTargets(const std::vector<Trace>& traces, const std::string& html_path,
                          const std::string& markdown_path, const std::string& html_label,
                          const std::string& markdown_label) {
  std::vector<NamedPath> inputs, read_too;
  for (const Trace& t : traces) {
    inputs.emplace_back("", t.path);
    if (t.capture && !t.capture->path.empty())
      read_too.emplace_back("the capture JSON " + t.path + " was read with", t.capture->path);
  }
  return checkOutputTargets(inputs, {{html_label, html_path}, {markdown_label, markdown_path}}, read_too);
}

Status writeReportFiles(const ReportResult& result, const std::vector<Trace>& traces, const std::string& html_path,
                        const std::string& markdown_path, const std::string& html_label,
                        const std::string& markdown_label) {
  if (Status st = checkReportTargets(traces, html_path, markdown_path, html_label, markdown_label); !st.ok())
    return st;
  if (!html_path.empty())
    if (Status st = traces::writeOutputFile(html_path, result.html); !st.ok()) return st;
  if (!markdown_path.empty())
    if (Status st = traces::writeOutputFile(markdown_path, result.markdown); !st.ok()) return st;
  return {};
}

}  // namespace reservoir::replay
