#include "calls.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "interruptible.h"
#include "reservoir/replay/conformance.h"
#include "reservoir/replay/export.h"
#include "reservoir/replay/gate.h"
#include "reservoir/replay/report_json.h"
#include "reservoir/replay/scale_report.h"
#include "reservoir/replay/summary.h"
#include "reservoir/replay/sweep.h"
#include "reservoir/traces/writer.h"

namespace reservoir::python {
namespace {

namespace scale = replay::scale;
using replay::Input;

// Python's names: the keyword, or "inputs" for scale's captures.
std::string keywordOf(Input input) {
  if (input == Input::kFrom) return "inputs";
  return std::string(replay::inputName(input));
}

std::string keywordGiven(Input input) { return keywordOf(input) + "="; }

bool isListKeyword(Input input) {
  switch (input) {
    case Input::kCleanup:
    case Input::kRelease:
    case Input::kProbe:
    case Input::kDemand:
    case Input::kResetPeaks: return true;
    default: return false;
  }
}

// A number keyword's value as Python writes it: fraction=0.05, not fraction='0.05'.
bool isNumberKeyword(Input input) {
  return input == Input::kFraction || input == Input::kJobs || input == Input::kMaxCalls || input == Input::kSteps;
}

std::string keywordWithValue(Input input, std::string_view value) {
  if (isNumberKeyword(input)) return keywordOf(input) + "=" + std::string(value);
  const std::string quoted = "'" + std::string(value) + "'";
  return keywordOf(input) + "=" + (isListKeyword(input) ? "[" + quoted + "]" : quoted);
}

std::string methodCall(replay::Command command) {
  return command == replay::Command::kInfo ? "trace.info()" : "trace.check()";
}

// An option or a point the trace does not have: ValueError.
[[noreturn]] void valueError(const std::string& message) { throw py::value_error(message); }

template <class T>
T valueOr(Expected<T> e, const std::string& context = {}) {
  if (!e) valueError(context.empty() ? e.message() : context + ": " + e.message());
  return std::move(*e);
}

// As the command line's openTrace: a snapshot without allocation history loads (info works); its
// replays raise NothingToReplay (requireHistory).
LoadedTrace chooseDevice(replay::Trace trace, std::optional<std::int64_t> device) {
  const replay::Wording& words = pythonWording();
  if (auto none = replay::nothingToReplay(trace.snap(), std::nullopt, words); none && !device) {
    LoadedTrace empty{std::move(trace), 0, device, std::nullopt};
    if (empty.hasDevice()) empty.device_index = empty.trace.snap().busiestDevice();
    empty.nothing_to_replay = empty.trace.path + ": " + *none;
    return empty;
  }
  auto d = replay::chooseDevice(trace.snap(), device);
  if (!d) {
    if (device) valueError(trace.path + ": " + d.message());
    throw TraceInputError(trace.path + ": " + d.message());
  }
  LoadedTrace t{std::move(trace), *d, device, std::nullopt};
  if (auto none = replay::nothingToReplay(t.trace.snap(), *d, words)) t.nothing_to_replay = t.trace.path + ": " + *none;
  return t;
}

void requireHistory(const LoadedTrace& t) {
  if (t.nothing_to_replay)
    throw TraceInputError(*t.nothing_to_replay, TraceInputError::Kind::kNothingToReplay, t.trace.path);
}

void requireTraces(const std::vector<const LoadedTrace*>& traces, const char* call) {
  if (traces.empty()) valueError(std::string(call) + ": give at least one trace");
  for (const LoadedTrace* t : traces) requireHistory(*t);
}

void useCapture(replay::Trace& trace, const std::string& capture) {
  auto facts = replay::readCaptureFacts(capture);
  if (!facts) throw TraceInputError(facts.message());
  trace.capture = std::make_shared<const replay::CaptureFacts>(std::move(*facts));
}

// The environment the command line replays a trace in when no recorded-device option is given.
replay::ReplayEnvironment recordedEnvironment(const LoadedTrace& t) {
  auto env = replay::replayEnvironment(t.trace, {}, pythonWording());
  if (!env) throw TraceInputError(t.trace.path + ": " + env.message());
  return std::move(*env);
}

replay::PreparedTrace prepare(const LoadedTrace& t, const replay::EditedRunOptions& options,
                              const std::atomic<bool>* cancel = nullptr) {
  requireHistory(t);
  auto prepared = replay::prepareTrace(t.trace.snapshot, t.device_index,
                                       replay::editedRunEnvironment(recordedEnvironment(t), options), cancel);
  if (!prepared) throw TraceInputError(t.trace.path + ": " + prepared.message());
  return std::move(*prepared);
}

// One trace's what-if report, as `reservoir whatif` makes it (runWhatIf's two steps, so that a
// point that matches nothing is a ValueError and unusable input a TraceError).
replay::WhatIfReport whatIfOne(const LoadedTrace& t, const replay::WhatIfOptions& w) {
  return valueOr(replay::runWhatIfOn(prepare(t, w), w), t.trace.path);
}

// Every trace's report, `jobs` traces at once (0: every core), in the traces' order; the first
// trace's error (in that order) is raised.
std::vector<replay::WhatIfReport> whatIfAll(Interruptible& job, const std::vector<const LoadedTrace*>& traces,
                                            const replay::WhatIfOptions& w, unsigned jobs) {
  auto progress = job.progressFn();
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads = std::min<std::size_t>(traces.size(), jobs == 0 ? cores : std::min(jobs, cores));
  return job.run([&] {
    std::vector<std::optional<replay::WhatIfReport>> reports(traces.size());
    std::vector<std::exception_ptr> errors(traces.size());
    std::atomic<std::size_t> next{0}, done{0};
    auto worker = [&] {
      for (std::size_t i = next++; i < traces.size() && !job.cancelled(); i = next++) {
        try {
          reports[i] = whatIfOne(*traces[i], w);
        } catch (...) {
          errors[i] = std::current_exception();
        }
        progress(++done, traces.size());
      }
    };
    progress(0, traces.size());
    std::vector<std::thread> pool;
    for (std::size_t k = 1; k < threads; ++k) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    std::vector<replay::WhatIfReport> out;
    for (std::size_t i = 0; i < traces.size(); ++i) {
      if (errors[i]) std::rethrow_exception(errors[i]);
      if (reports[i]) out.push_back(std::move(*reports[i]));
    }
    return out;
  });
}

nlohmann::json checkOne(const LoadedTrace& t, const CheckText& text, Interruptible& job) {
  if (text.device.settings) valueError("check: settings are not supported here; use whatif(set=...)");
  requireHistory(t);
  auto env = valueOr(replay::replayEnvironment(t.trace, text.device, pythonWording()));
  replay::ConformanceOptions opts;
  opts.env = std::move(env);
  opts.expensive_checks = text.expensive;
  auto resets = replay::choosePeakResets(t.trace.snap(), t.device_index, opts.env.capture.get(), text.reset_peaks);
  if (!resets) valueError("reset_peaks: " + resets.message());
  opts.progress = job.progressFn();
  opts.cancel = job.cancelFlag();
  auto report = job.run([&] { return replay::checkRecording(t.trace.snap(), t.device_index, opts, *resets); });
  if (!report) throw TraceInputError(t.trace.path + ": " + report.message());
  return replay::conformanceJson(*report, t.trace.path);
}

replay::SweepOptions sweepOptions(const SweepText& text) {
  replay::SweepOptions o;
  static_cast<replay::EditedRunOptions&>(o) = valueOr(replay::parseEditedRunOptions(text.device, pythonWording()));
  o.max_candidates = text.max_candidates;
  o.jobs = text.jobs;
  o.try_settings = text.try_settings;
  o.objective = valueOr(replay::parseSweepObjective(text.minimize), "minimize");
  o.max_calls = text.max_calls;
  o.steps = text.steps;
  return o;
}

}  // namespace

const replay::Wording& pythonWording() {
  static const replay::Wording wording{&keywordOf, &keywordGiven, &keywordWithValue, &methodCall};
  return wording;
}

LoadedTrace loadPath(const std::string& path, std::optional<std::int64_t> device, bool use_capture_json,
                     const std::optional<std::string>& capture, const py::object& progress) {
  Interruptible job(progress);
  replay::TraceReadOptions o;
  o.use_capture_json = use_capture_json && !capture;
  o.progress = job.progressFn();
  o.cancel = job.cancelFlag();
  auto trace = job.run([&] { return replay::readTrace(path, o); });
  if (!trace) {
    TraceInputError error(trace.status());
    std::error_code ec;
    if (!std::filesystem::exists(path, ec) && !ec) error.kind = TraceInputError::Kind::kFileNotFound;
    throw error;
  }
  if (capture) useCapture(*trace, *capture);
  return chooseDevice(std::move(*trace), device);
}

LoadedTrace loadBytes(const py::bytes& data, const std::string& name, std::optional<std::int64_t> device,
                      const std::optional<std::string>& capture, const py::object& progress) {
  char* buffer = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_AsStringAndSize(data.ptr(), &buffer, &size) != 0) throw py::error_already_set();
  // `data` stays referenced by the caller (and bytes are immutable) while the GIL is released.
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(buffer),
                                            static_cast<std::size_t>(size));
  Interruptible job(progress);
  replay::TraceReadOptions o;
  o.progress = job.progressFn();
  o.cancel = job.cancelFlag();
  auto trace = job.run([&] { return replay::readTraceBytes(bytes, name, nullptr, o); });
  if (!trace) throw TraceInputError(trace.status());
  if (capture) useCapture(*trace, *capture);
  return chooseDevice(std::move(*trace), device);
}

std::string infoJson(const LoadedTrace& t, const py::object& progress, bool peak_allocated) {
  const traces::Snapshot& snap = t.trace.snap();
  const auto devices = valueOr(replay::summaryDevices(snap, t.device_asked), t.trace.path);
  const auto env = recordedEnvironment(t);
  Interruptible job(progress);
  auto progressFn = job.progressFn();
  replay::SummaryOptions options;
  options.model_allocated_peak = peak_allocated;
  const auto sums = job.run([&] {
    std::vector<replay::DeviceSummary> s;
    for (std::size_t d : devices) {
      progressFn(s.size(), devices.size());
      s.push_back(replay::summarizeDevice(snap, d, env, options));
    }
    return s;
  });
  return replay::infoJson(snap, t.trace.path, sums).dump(2);
}

std::string checkJson(const std::vector<const LoadedTrace*>& traces, const CheckText& text,
                      const py::object& progress) {
  requireTraces(traces, "check");
  Interruptible job(progress);
  if (traces.size() == 1) return checkOne(*traces[0], text, job).dump(2);
  nlohmann::json per = nlohmann::json::array();
  std::size_t exact = 0;
  for (const LoadedTrace* t : traces) {
    per.push_back(checkOne(*t, text, job));
    if (per.back().value("exact", false)) ++exact;
  }
  return replay::checksJson(per, exact, traces.size() - exact, nlohmann::json::array()).dump(2);
}

std::string whatifJson(const std::vector<const LoadedTrace*>& traces, const replay::WhatIfText& text, unsigned jobs,
                       const py::object& progress) {
  requireTraces(traces, "whatif");
  const auto w = valueOr(replay::parseWhatIfOptions(text, pythonWording()));
  Interruptible job(progress);
  auto reports = whatIfAll(job, traces, w, jobs);
  std::vector<replay::RankWhatIf> ranks;
  for (std::size_t i = 0; i < traces.size(); ++i) ranks.push_back({traces[i]->trace, std::move(reports[i])});
  return replay::whatIfJson(ranks).dump(2);
}

std::string sweepJson(const std::vector<const LoadedTrace*>& traces, const SweepText& text,
                      const py::object& progress) {
  requireTraces(traces, "sweep");
  replay::SweepOptions o = sweepOptions(text);
  Interruptible job(progress);
  o.progress = job.progressFn();
  o.cancel = job.cancelFlag();
  std::vector<replay::SweepReport> per_trace;
  std::vector<std::string> paths;
  for (const LoadedTrace* t : traces) {
    auto rep = job.run([&] { return replay::runSweep(prepare(*t, o, o.cancel), o); });
    if (!rep) valueError(t->trace.path + ": " + rep.message());
    per_trace.push_back(std::move(*rep));
    paths.push_back(t->trace.path);
  }
  return replay::sweepJson(replay::worstOverTraces(per_trace), paths, text.top).dump(2);
}

std::string exportRun(const LoadedTrace& t, const replay::WhatIfText& text, const std::string& out,
                      const std::string& csv, const py::object& progress) {
  if (out.empty() && csv.empty()) valueError("export: give a snapshot path and/or csv=PATH");
  const std::string capture = t.trace.capture ? t.trace.capture->path : std::string();
  if (Status st = replay::checkExportTargets(t.trace.path, {{"path", out}, {"csv", csv}}, capture); !st.ok())
    valueError("export: " + st.message());
  const auto w = valueOr(replay::parseWhatIfOptions(text, pythonWording()));
  requireHistory(t);
  Interruptible job(progress);
  auto counts = job.run([&] {
    const auto prepared = prepare(t, w, job.cancelFlag());
    const auto edits = valueOr(replay::resolveEdits(prepared, w.edits), t.trace.path);
    return replay::writeEditedRun(prepared, edits, w, out, csv, job.cancelFlag());
  });
  if (!counts) throw OutputError(counts.message());
  const nlohmann::json j = {{"trace", t.trace.path},
                            {"out", out.empty() ? nlohmann::json() : nlohmann::json(out)},
                            {"csv", csv.empty() ? nlohmann::json() : nlohmann::json(csv)},
                            {"events", counts->events},
                            {"segments", counts->segments},
                            {"rows", counts->rows}};
  return j.dump(2);
}

GateOutcome gate(const std::vector<const LoadedTrace*>& traces, const std::string& max_peak_reserved,
                 const replay::WhatIfText& text, const py::object& progress) {
  requireTraces(traces, "gate");
  auto w = valueOr(replay::parseWhatIfOptions(text, pythonWording()));
  w.analyze_peak = false;
  const auto conditions = valueOr(replay::gateConditions(max_peak_reserved, w, pythonWording()));
  if (!replay::hasCondition(conditions, !text.device.capacity.empty() || text.device.fraction.has_value()))
    valueError(
        "gate needs a condition: max_peak_reserved=BYTES, demand=['BYTES@POINT'], or capacity= / fraction= "
        "(fail on a predicted out-of-memory)");
  Interruptible job(progress);
  const auto reports = whatIfAll(job, traces, w, 1);
  std::vector<replay::GateInput> inputs;
  std::vector<std::string> paths;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    paths.push_back(traces[i]->trace.path);
    inputs.push_back({paths.back(), &reports[i]});
  }
  const auto v = valueOr(replay::judgeGate(inputs, conditions));
  return GateOutcome{replay::gateJson(v, paths, reports, conditions.max_peak_reserved).dump(2), v.pass, v.undecided,
                     v.reason, v.summary};
}

std::string reportJson(const std::vector<const LoadedTrace*>& traces, const ReportCall& call,
                       const py::object& progress) {
  requireTraces(traces, "report");
  std::vector<replay::Trace> loaded;
  for (const LoadedTrace* t : traces) loaded.push_back(t->trace);
  if (Status st = replay::checkReportTargets(loaded, call.html, call.markdown); !st.ok()) valueError(st.message());
  Interruptible job(progress);
  auto progressFn = job.progressFn();
  auto result = job.run([&] {
    return replay::makeReport(
        loaded, call.text, traces[0]->device_asked, {}, pythonWording(),
        [&](std::string_view, std::size_t done, std::size_t total) { progressFn(done, total); }, job.cancelFlag());
  });
  if (!result) valueError(result.message());  // as whatif's: an edit or a variant that names nothing
  if (Status st = replay::writeReportFiles(*result, loaded, call.html, call.markdown); !st.ok())
    throw OutputError(st.message());
  return result->json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::pair<std::optional<std::string>, std::string> splitScaleInput(const std::string& spec) {
  auto split = valueOr(scale::splitInputSpec(spec), "inputs: '" + spec + "'");
  if (!split.first) return {std::nullopt, split.second};
  return {scale::paramsText(*split.first), split.second};
}

namespace {

// The inputs as the library takes them: parameters given, else from the capture sidecar.
std::vector<scale::Input> scaleInputs(const std::vector<ScaleInput>& inputs) {
  if (inputs.empty()) valueError("scale: give at least one input capture");
  std::vector<scale::Input> out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const LoadedTrace& t = *inputs[i].trace;
    requireHistory(t);
    const std::string where = "inputs[" + std::to_string(i) + "] (" + t.trace.path + ")";
    scale::Params params;
    if (inputs[i].params) {
      params = valueOr(scale::parseParams(*inputs[i].params), where);
    } else if (!t.trace.capture) {
      valueError(where +
                 ": no parameters given and no capture sidecar read beside it: give ({'world': W, ...}, trace) or "
                 "'world=W,...:PATH'");
    } else {
      params = valueOr(scale::paramsFromCaptureJson(t.trace.path), where);
    }
    out.push_back({t.trace.snapshot, t.device_index, recordedEnvironment(t), std::move(params), t.trace.path});
  }
  return out;
}

// One target's whole answer: the row, and "out" and "check" when asked.
nlohmann::json oneTarget(const scale::Scaler& scaler, const scale::Params& target, const replay::WhatIfOptions& w,
                         const ScaleText& text) {
  auto r = valueOr(scale::runTarget(scaler, target, w), "to " + scale::paramsText(target));
  nlohmann::json j = scale::targetJson(scaler, r, scale::hasEdits(w), text.max_unexplained);
  if (!text.out.empty()) {
    if (Status st = traces::writeSnapshotFile(*r.trace.snapshot, text.out); !st.ok())
      throw OutputError(text.out + ": " + st.message());
    j["out"] = text.out;
  }
  if (text.measured) {
    const LoadedTrace& m = *text.measured;
    requireHistory(m);
    const scale::Input in{m.trace.snapshot, m.device_index, recordedEnvironment(m), {}, m.trace.path};
    j["check"] = valueOr(scale::measuredJson(scaler, r, in), "measured");
  }
  return j;
}

}  // namespace

std::string scaleJson(const std::vector<ScaleInput>& inputs, const ScaleText& text, const py::object& progress) {
  auto in = scaleInputs(inputs);
  const auto targets = valueOr(scale::parseTargets(text.to), "to");
  if (targets.empty()) valueError("to: give the target's parameters, e.g. 'world=64,seq=16384'");
  if (targets.size() > 1 && !text.out.empty())
    valueError("out= writes one trace, but to= gives " + std::to_string(targets.size()) + " targets");
  if (targets.size() > 1 && text.measured)
    valueError("measured= checks one target, but to= gives " + std::to_string(targets.size()) + " targets");
  for (const auto& i : in)
    if (Status st = replay::checkExportTargets(i.name, {{"out", text.out}}); !st.ok()) valueError(st.message());
  if (text.measured)
    if (Status st = replay::checkExportTargets(text.measured->trace.path, {{"out", text.out}}); !st.ok())
      valueError(st.message());
  auto w = valueOr(replay::parseWhatIfOptions(text.edits, pythonWording()));
  if (targets.size() > 1) w.analyze_peak = false;  // a grid's rows do not show what pins the cache
  Interruptible job(progress);
  auto progressFn = job.progressFn();
  auto result = job.run([&] {
    auto scaler = valueOr(scale::Scaler::create(std::move(in)), "scale");
    if (targets.size() == 1) return oneTarget(scaler, targets[0], w, text);
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t i = 0; i < targets.size() && !job.cancelled(); ++i) {
      progressFn(i, targets.size());
      rows.push_back(oneTarget(scaler, targets[i], w, text));
    }
    progressFn(targets.size(), targets.size());
    return nlohmann::json{{"targets", rows}};
  });
  return result.dump(2);
}

}  // namespace reservoir::python
