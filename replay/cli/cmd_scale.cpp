// reservoir scale --from [PARAMS:]TRACE ... --to PARAMS: the trace of the same program at
// another size (world, seq, batch, ...), extrapolated from captures and replayed through the
// exact model, with what-if edits. Grids (--to world=8,16,32) print one row per target.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <sstream>

#include "commands.h"
#include "common.h"
#include "edit_options.h"
#include "reservoir/replay/output_targets.h"
#include "reservoir/replay/report_json.h"
#include "reservoir/replay/report_text.h"
#include "reservoir/replay/scale.h"
#include "reservoir/replay/scale_report.h"
#include "reservoir/traces/writer.h"
#include "work_pool.h"

namespace reservoir::cli {
namespace {

namespace scale = replay::scale;

struct ScaleArgs {
  std::vector<std::string> from, to;
  std::optional<std::int64_t> device;
  bool json = false;
  std::string out_path;
  std::string measured;  // a capture of the target, to check the prediction against
  std::size_t max_unexplained = 20;
  EnvOptions env;
  EditOptions edits;
};

struct Opened {
  std::vector<OpenTrace> traces;
  std::vector<scale::Input> inputs;
};

Expected<Opened> openInputs(const ScaleArgs& a, std::ostream& err) {
  Opened o;
  for (const auto& spec : a.from) {
    auto split = scale::splitInputSpec(spec);
    if (!split) return split.status().prefixed("--from " + spec + ": ");
    if (!split->first && a.env.no_capture_json)
      return Status::error("--from " + spec +
                           ": no parameters, and --no-capture-json keeps them from being read from "
                           "the sidecar (write --from NAME=VALUE,...:FILE)");
    // The trace (and the sidecar beside it, checked by the reader) before its parameters are read
    // from that sidecar: a sidecar that cannot be used is refused with its path.
    auto opened = openTrace(split->second, a.device, a.env, err);
    if (!opened) return opened.status();
    auto params = split->first ? Expected<scale::Params>(*split->first) : scale::paramsFromCaptureJson(split->second);
    if (!params) return params.status();
    o.traces.push_back(std::move(*opened));
    const OpenTrace& t = o.traces.back();
    o.inputs.push_back({t.trace.snapshot, t.device, t.env, std::move(*params), split->second});
  }
  return o;
}

Expected<std::vector<scale::Params>> targetsOf(const ScaleArgs& a) {
  auto targets = scale::parseTargets(a.to);
  if (!targets) return targets.status().prefixed("--to ");  // a usage error (exit 2) stays one
  return targets;
}

using scale::TargetResult;

// --measured: the prediction against a capture of the target, peaks and request by request.
Expected<nlohmann::json> checkJson(const scale::Scaler& s, const TargetResult& r, const ScaleArgs& a,
                                   std::ostream& err) {
  auto opened = openTrace(a.measured, a.device, a.env, err);
  if (!opened) return opened.status();
  const scale::Input in{opened->trace.snapshot, opened->device, opened->env, {}, a.measured};
  return scale::measuredJson(s, r, in);
}

void printCheck(std::ostream& out, const nlohmann::json& c) {
  out << fmt::format(
      "against {}: peak reserved error {:+} bytes, peak allocated error {:+} bytes; {} of {} requests "
      "equal ({} only predicted, {} only measured)\n",
      c["trace"].get<std::string>(), c["error_peak_reserved"].get<std::int64_t>(),
      c["error_peak_allocated"].get<std::int64_t>(), c["requests_equal"].get<std::size_t>(),
      c["requests_compared"].get<std::size_t>(), c["only_predicted"].get<std::size_t>(),
      c["only_measured"].get<std::size_t>());
  for (const auto& m : c["misses"])
    out << fmt::format("  miss: {} x {} ({}), {:+} bytes in all, e.g. predicted {} measured {}\n",
                       m["count"].get<std::size_t>(), m["where"].get<std::string>(), m["law"].get<std::string>(),
                       m["bytes"].get<std::int64_t>(), m["example"]["predicted"].get<std::int64_t>(),
                       m["example"]["measured"].get<std::int64_t>());
}

std::string fitsText(const replay::RunResult& run, bool capacity_known) {
  if (!capacity_known) return "-";
  return run.oom ? "no" : "yes";
}

void printModel(std::ostream& out, const scale::Scaler& s, const scale::ScaleModel& m) {
  out << fmt::format("model: {} requests from {} ({} matched in every input); laws:", m.requests.size(),
                     s.inputs()[m.template_input].name, m.matched_everywhere);
  for (const auto& [k, v] : m.laws) out << fmt::format(" {} {}", k, v);
  out << "\n";
  for (const auto& n : m.notes) out << "note: " << n << "\n";
  for (const auto& u : scale::undeterminedJson(s, m)) {
    out << fmt::format("undetermined: {} x {} ({}): {}", u["count"].get<std::size_t>(), u["where"].get<std::string>(),
                       u["law"].get<std::string>(), u["why"].get<std::string>());
    if (!u["add_capture"].is_null())
      out << fmt::format("; add a capture at {} to tell them apart",
                         scale::paramsText(u["add_capture"].get<scale::Params>()));
    out << "\n";
  }
}

const replay::WhatIfReport& needs(const TargetResult& r) { return r.unlimited ? *r.unlimited : r.report; }

void printGridRow(std::ostream& out, const TargetResult& r, bool edits, bool capacity_known) {
  const auto& n = needs(r);
  std::string row =
      fmt::format("{:<24} {:>16} {:>16} {:>5}", scale::paramsText(r.asked), n.baseline.peak_reserved.bytes,
                  n.baseline.peak_allocated.bytes, fitsText(r.report.baseline, capacity_known));
  if (edits)
    row += fmt::format(" {:>16} {:>5}", n.whatif.peak_reserved.bytes, fitsText(r.report.whatif, capacity_known));
  const auto unexplained = r.model.laws.count("unexplained") ? r.model.laws.at("unexplained") : 0;
  out << row << fmt::format(" {:>11}\n", unexplained);
}

// One target's row of --json.
nlohmann::json rowJson(const scale::Scaler& s, const TargetResult& r, const ScaleArgs& a, bool edits) {
  return scale::targetJson(s, r, edits, a.max_unexplained);
}

bool hasEdits(const replay::WhatIfOptions& w) { return scale::hasEdits(w); }

// The inputs and their scaler, made once per process and only by a process that runs a target.
struct GridInputs {
  std::optional<Opened> opened;
  std::optional<scale::Scaler> scaler;
  Status status;
};

// One target of a grid: {"json": its row} or {"text": its row, "model": the model's lines (what the
// first target prints above the table), "capacity_known", "usable"}; or {"error"}.
std::string gridItem(const ScaleArgs& a, const replay::WhatIfOptions& w, GridInputs& in, const scale::Params& target) {
  if (!in.opened && in.status.ok()) {
    auto opened = openInputs(a, nullStream());
    if (!opened) {
      in.status = opened.status();
    } else {
      in.opened = std::move(*opened);
      auto scaler = scale::Scaler::create(in.opened->inputs);
      if (!scaler)
        in.status = scaler.status();
      else
        in.scaler = std::move(*scaler);
    }
  }
  if (!in.status.ok()) return itemError(in.status);
  auto r = scale::runTarget(*in.scaler, target, w);
  if (!r) return itemError(r.status(), fmt::format("--to {}: ", scale::paramsText(target)));
  const bool capacity_known = r->report.capacity.has_value();
  if (a.json) return nlohmann::json{{"json", rowJson(*in.scaler, *r, a, hasEdits(w))}}.dump();
  std::ostringstream row, model;
  printGridRow(row, *r, hasEdits(w), capacity_known);
  printModel(model, *in.scaler, r->model);
  return nlohmann::json{{"text", row.str()},
                        {"model", model.str()},
                        {"capacity_known", capacity_known},
                        {"usable", r->report.edited_run.usable.value_or(0)}}
      .dump();
}

// A grid (several targets): one item per target, spread over the processes of an MPI job.
int runGrid(const ScaleArgs& a, replay::WhatIfOptions w, const std::vector<scale::Params>& targets, std::ostream& out,
            std::ostream& err) {
  w.analyze_peak = false;  // a grid's rows do not show what pins the cache
  WorkPool& pool = workPool();
  GridInputs inputs;
  // Progress over the targets (one thread here; an MPI job's other processes print none).
  Progress progress(pool.processes() == 1 ? err : nullStream(), "scaling");
  std::size_t done = 0;
  const auto results = pool.run(
      std::vector<std::uint64_t>(targets.size(), 1),
      [&](std::size_t i) {
        std::string r = gridItem(a, w, inputs, targets[i]);
        progress(++done, targets.size());
        return r;
      },
      1, err);
  if (!pool.root()) return kOk;
  printMpiSummary(err);
  std::vector<nlohmann::json> rows;
  for (const auto& text : results) {
    auto r = nlohmann::json::parse(text);
    if (r.contains("error")) return failItem(err, r);  // one target failing fails the grid, as before
    rows.push_back(std::move(r));
  }
  if (a.json) {
    nlohmann::json j{{"targets", nlohmann::json::array()}};
    for (auto& r : rows) j["targets"].push_back(std::move(r["json"]));
    addMpiObject(j);
    out << j.dump(2) << "\n";
    return kOk;
  }
  out << rows[0]["model"].get<std::string>();
  std::string head = fmt::format("{:<24} {:>16} {:>16} {:>5}", "target", "peak reserved", "peak allocated", "fits");
  if (hasEdits(w)) head += fmt::format(" {:>16} {:>5}", "edited reserved", "fits");
  out << head << fmt::format(" {:>11}\n", "unexplained");
  if (rows[0]["capacity_known"].get<bool>())
    out << fmt::format("(peaks: what each target needs, with no capacity; fits: no out-of-memory with {} usable)\n",
                       sizeText(rows[0]["usable"].get<std::int64_t>()));
  for (const auto& r : rows) out << r["text"].get<std::string>();
  return kOk;
}

// --out must not be any capture the command reads (--from, --measured) or a capture's sidecar:
// the rule of every command that writes (replay::checkOutputTargets).
Status checkScaleOutput(const ScaleArgs& a) {
  std::vector<replay::NamedPath> inputs;
  for (const auto& spec : a.from) {
    auto split = scale::splitInputSpec(spec);
    if (!split) return split.status().prefixed("--from " + spec + ": ");
    inputs.emplace_back("--from", split->second);
  }
  inputs.emplace_back("--measured", a.measured);
  return replay::checkOutputTargets(inputs, {{"--out", a.out_path}});
}

int runScaleCmd(const ScaleArgs& a, std::ostream& out, std::ostream& err) {
  if (Status st = checkScaleOutput(a); !st.ok()) return fail(err, st);
  auto w = makeWhatIfOptions(a.edits);
  if (!w) return fail(err, w.status());
  auto targets = targetsOf(a);
  if (!targets) return fail(err, targets.status());
  if (targets->size() > 1 && !a.out_path.empty())
    return fail(err, fmt::format("--out writes one trace, but --to gives {} targets", targets->size()));
  if (targets->size() > 1 && !a.measured.empty())
    return fail(err, fmt::format("--measured checks one target, but --to gives {} targets", targets->size()));
  if (targets->size() > 1) return runGrid(a, *w, *targets, out, err);
  if (!workPool().root()) return kOk;  // one target: the first process answers alone
  auto opened = openInputs(a, err);
  if (!opened) return fail(err, opened.status());
  auto scaler = scale::Scaler::create(opened->inputs);
  if (!scaler) return fail(err, scaler.status());
  const bool edits = hasEdits(*w);
  auto result = scale::runTarget(*scaler, targets->front(), *w);
  if (!result) return fail(err, result.status(), fmt::format("--to {}: ", scale::paramsText(targets->front())));
  const TargetResult& r = *result;
  if (!a.out_path.empty()) {
    auto st = traces::writeSnapshotFile(*r.trace.snapshot, a.out_path);
    if (!st.ok()) return fail(err, a.out_path + ": " + st.message());
  }
  std::optional<nlohmann::json> check;
  if (!a.measured.empty()) {
    auto c = checkJson(*scaler, r, a, err);
    if (!c) return fail(err, "--measured " + c.message());
    check = std::move(*c);
  }
  if (a.json) {
    nlohmann::json j = rowJson(*scaler, r, a, edits);
    if (!a.out_path.empty()) j["out"] = a.out_path;
    if (check) j["check"] = *check;
    out << j.dump(2) << "\n";
    return kOk;
  }
  printModel(out, *scaler, r.model);
  out << replay::whatIfReportText(*r.trace.snapshot, r.report, "predicted " + scale::paramsText(r.model.target), false);
  if (!a.out_path.empty()) out << "predicted trace written to " << a.out_path << "\n";
  if (check) printCheck(out, *check);
  return kOk;
}

}  // namespace

void registerScale(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err) {
  auto args = std::make_shared<ScaleArgs>();
  CLI::App* cmd = app.add_subcommand("scale",
                                     "Predict the trace of a job at another size (world, seq, batch, ...) from "
                                     "captures at a few sizes, and replay it");
  cmd->footer(
      "Example: reservoir scale --from world=2,seq=4096:A.pickle --from world=4,seq=4096:B.pickle "
      "--to world=8,16,32,64 --capacity 141GiB --overhead 3GiB --cleanup after:train.py:load\n"
      "Parameters may come from the capture sidecar (--from A.pickle reads A.json: world_size and config). A parameter "
      "missing from --to takes the inputs' common value. Each request's size is fitted as a law of the parameters "
      "(constant, affine in tokens = seq*batch, FSDP2 shard c + K/world, quadratic where three inputs show one); the "
      "predicted trace is an ordinary snapshot (--out) that whatif, sweep, export and memory_viz open. See "
      "docs/scale.md.");
  cmd->add_option("--from", args->from, "[NAME=VALUE,...:]TRACE, a capture of the program at known parameters (repeat)")
      ->required();
  cmd->add_option("--to", args->to, "NAME=VALUE[,VALUE...],...: the target; value lists make a grid (one row each)")
      ->required();
  cmd->add_option("--device", args->device, "CUDA device number (default: the one with the most events)");
  cmd->add_option("--out", args->out_path, "write the predicted trace (a snapshot pickle) here");
  cmd->add_option("--measured", args->measured,
                  "a capture of the target: report the prediction's error in bytes and the request classes that miss");
  cmd->add_option("--max-unexplained", args->max_unexplained, "unexplained requests listed in --json (default 20)");
  cmd->add_flag("--json", args->json, "machine-readable output");
  cmd->add_flag("--no-capture-json", args->env.no_capture_json,
                "ignore X.json beside X.pickle (then every --from gives its parameters)");
  addEditOptions(cmd, &args->edits);
  cmd->callback([args, set_result, &out, &err] { set_result(runScaleCmd(*args, out, err)); });
}

}  // namespace reservoir::cli
