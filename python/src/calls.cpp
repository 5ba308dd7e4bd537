#include "calls.h"

#include <nlohmann/json.hpp>

#include "interruptible.h"
#include "reservoir/replay/conformance.h"
#include "reservoir/replay/export.h"
#include "reservoir/replay/gate.h"
#include "reservoir/replay/report_json.h"
#include "reservoir/replay/summary.h"
#include "reservoir/replay/sweep.h"

namespace reservoir::python {
namespace {

// An option or a point the trace does not have: ValueError.
[[noreturn]] void valueError(const std::string& message) { throw py::value_error(message); }

template <class T>
T valueOr(Expected<T> e, const std::string& context = {}) {
  if (!e) valueError(context.empty() ? e.message() : context + ": " + e.message());
  return std::move(*e);
}

// As the command line's openTrace: a snapshot without allocation history loads (info works), and
// check / whatif answer with the library's nothing-to-replay sentence.
LoadedTrace chooseDevice(replay::Trace trace, std::optional<std::int64_t> device) {
  if (auto none = replay::nothingToReplay(trace.snap()); none && !device) {
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
  if (auto none = replay::nothingToReplay(t.trace.snap(), *d)) t.nothing_to_replay = t.trace.path + ": " + *none;
  return t;
}

// The command line's --json answer for a trace with nothing to replay.
nlohmann::json nothingToReplayJson(const LoadedTrace& t) {
  return {{"trace", t.trace.path}, {"nothing_to_replay", *t.nothing_to_replay}};
}

void useCapture(replay::Trace& trace, const std::string& capture) {
  auto facts = replay::readCaptureFacts(capture);
  if (!facts) throw TraceInputError(facts.message());
  trace.capture = std::make_shared<const replay::CaptureFacts>(std::move(*facts));
}

// The environment the command line replays a trace in when no recorded-device option is given.
replay::ReplayEnvironment recordedEnvironment(const LoadedTrace& t) {
  auto env = replay::replayEnvironment(t.trace, {}, "");
  if (!env) throw TraceInputError(t.trace.path + ": " + env.message());
  return std::move(*env);
}

replay::PreparedTrace prepare(const LoadedTrace& t, const replay::EditedRunOptions& options) {
  if (t.nothing_to_replay) throw TraceInputError(*t.nothing_to_replay);
  auto prepared = replay::prepareTrace(t.trace.snapshot, t.device_index,
                                       replay::editedRunEnvironment(recordedEnvironment(t), options));
  if (!prepared) throw TraceInputError(t.trace.path + ": " + prepared.message());
  return std::move(*prepared);
}

// One trace's what-if report, as `reservoir whatif` makes it (runWhatIf's two steps, so that a
// point that matches nothing is a ValueError and unusable input a TraceError).
replay::WhatIfReport whatIfOne(const LoadedTrace& t, const replay::WhatIfOptions& w) {
  return valueOr(replay::runWhatIfOn(prepare(t, w), w), t.trace.path);
}

std::vector<replay::WhatIfReport> whatIfAll(Interruptible& job, const std::vector<const LoadedTrace*>& traces,
                                            const replay::WhatIfOptions& w) {
  auto progress = job.progressFn();
  return job.run([&] {
    std::vector<replay::WhatIfReport> reports;
    for (std::size_t i = 0; i < traces.size() && !job.cancelled(); ++i) {
      progress(i, traces.size());
      reports.push_back(whatIfOne(*traces[i], w));
    }
    progress(traces.size(), traces.size());
    return reports;
  });
}

}  // namespace

LoadedTrace loadPath(const std::string& path, std::optional<std::int64_t> device, bool use_capture_json,
                     const std::optional<std::string>& capture, const py::object& progress) {
  Interruptible job(progress);
  replay::TraceReadOptions o;
  o.use_capture_json = use_capture_json && !capture;
  o.progress = job.progressFn();
  o.cancel = job.cancelFlag();
  auto trace = job.run([&] { return replay::readTrace(path, o); });
  if (!trace) throw TraceInputError(trace.status());
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

std::string infoJson(const LoadedTrace& t, const py::object& progress) {
  const traces::Snapshot& snap = t.trace.snap();
  const auto devices = valueOr(replay::summaryDevices(snap, t.device_asked), t.trace.path);
  const auto env = recordedEnvironment(t);
  Interruptible job(progress);
  auto progressFn = job.progressFn();
  const auto sums = job.run([&] {
    std::vector<replay::DeviceSummary> s;
    for (std::size_t d : devices) {
      progressFn(s.size(), devices.size());
      s.push_back(replay::summarizeDevice(snap, d, env));
    }
    return s;
  });
  return replay::infoJson(snap, t.trace.path, sums).dump(2);
}

std::string checkJson(const LoadedTrace& t, const CheckText& text, const py::object& progress) {
  if (!text.device.settings.empty()) valueError("check: settings are not supported here; use whatif(set=...)");
  if (t.nothing_to_replay) return nothingToReplayJson(t).dump(2);
  auto env = valueOr(replay::replayEnvironment(t.trace, text.device, ""));
  replay::ConformanceOptions opts;
  opts.env = std::move(env);
  opts.expensive_checks = text.expensive;
  auto resets = replay::choosePeakResets(t.trace.snap(), t.device_index, opts.env.capture.get(), text.reset_peaks);
  if (!resets) valueError("reset_peaks: " + resets.message());
  opts.reset_peaks_at = resets->boundaries;
  Interruptible job(progress);
  opts.progress = job.progressFn();
  opts.cancel = job.cancelFlag();
  auto report = job.run([&] { return replay::runConformance(t.trace.snap(), t.device_index, opts); });
  if (!report) throw TraceInputError(t.trace.path + ": " + report.message());
  if (!resets->note.empty()) report->notes.push_back(resets->note);
  return replay::conformanceJson(*report, t.trace.path).dump(2);
}

std::string whatifJson(const std::vector<const LoadedTrace*>& traces, const replay::WhatIfText& text,
                       const py::object& progress) {
  if (traces.empty()) valueError("whatif: give at least one trace");
  const auto w = valueOr(replay::parseWhatIfOptions(text, ""));
  // As `reservoir whatif --json`: traces without history are left out of the answer, and when
  // none has any, the answer is their nothing-to-replay sentences.
  std::vector<const LoadedTrace*> answered;
  nlohmann::json empty = nlohmann::json::array();
  for (const LoadedTrace* t : traces) {
    if (t->nothing_to_replay)
      empty.push_back(nothingToReplayJson(*t));
    else
      answered.push_back(t);
  }
  if (answered.empty()) return (empty.size() == 1 ? empty[0] : nlohmann::json{{"traces", empty}}).dump(2);
  Interruptible job(progress);
  auto reports = whatIfAll(job, answered, w);
  std::vector<replay::RankWhatIf> ranks;
  for (std::size_t i = 0; i < answered.size(); ++i) ranks.push_back({answered[i]->trace, std::move(reports[i])});
  return replay::whatIfJson(ranks).dump(2);
}

std::string sweepJson(const LoadedTrace& t, const SweepText& text, const py::object& progress) {
  replay::SweepOptions o;
  static_cast<replay::EditedRunOptions&>(o) = valueOr(replay::parseEditedRunOptions(text.device, ""));
  o.max_candidates = text.max_candidates;
  o.jobs = text.jobs;
  o.try_settings = text.try_settings;
  o.objective = valueOr(replay::parseSweepObjective(text.minimize), "minimize");
  o.max_calls = text.max_calls;
  o.steps = text.steps;
  Interruptible job(progress);
  o.progress = job.progressFn();
  o.cancel = job.cancelFlag();
  auto rep = job.run([&] { return replay::runSweep(prepare(t, o), o); });
  if (!rep) valueError(t.trace.path + ": " + rep.message());
  return replay::sweepJson(*rep, t.trace.path, text.top).dump(2);
}

std::string exportRun(const LoadedTrace& t, const replay::WhatIfText& text, const std::string& out,
                      const std::string& csv, const py::object& progress) {
  if (out.empty() && csv.empty()) valueError("export: give a snapshot path and/or csv=PATH");
  const auto w = valueOr(replay::parseWhatIfOptions(text, ""));
  Interruptible job(progress);
  auto counts = job.run([&] {
    const auto prepared = prepare(t, w);
    const auto edits = valueOr(replay::resolveEdits(prepared, w.edits), t.trace.path);
    return replay::writeEditedRun(prepared, edits, w, out, csv);
  });
  if (!counts) {
    PyErr_SetString(PyExc_OSError, counts.message().c_str());
    throw py::error_already_set();
  }
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
  if (traces.empty()) valueError("gate: give at least one trace");
  auto w = valueOr(replay::parseWhatIfOptions(text, ""));
  w.analyze_peak = false;
  const auto conditions = valueOr(replay::gateConditions(max_peak_reserved, w, ""));
  if (!replay::hasCondition(conditions, !text.device.capacity.empty() || text.device.fraction.has_value()))
    valueError(
        "gate needs a condition: max_peak_reserved=BYTES, demand=['BYTES@POINT'], or capacity= / fraction= "
        "(fail on a predicted out-of-memory)");
  Interruptible job(progress);
  const auto reports = whatIfAll(job, traces, w);
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

}  // namespace reservoir::python
