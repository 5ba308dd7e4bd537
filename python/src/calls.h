// What reservoir._core does: each call is the library's, as the command line makes it, and
// returns the library's JSON rendering (replay/report_json.h) as text for Python to load.
// Messages name Python's keywords (pythonWording: "give capacity=", "reset_peaks=['event:7']").
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "reservoir/replay/option_text.h"
#include "reservoir/replay/report.h"
#include "reservoir/replay/trace.h"
#include "reservoir/replay/wording.h"

namespace reservoir::python {

namespace py = pybind11;

// How the library's messages name inputs and commands in Python.
const replay::Wording& pythonWording();

// Unreadable or invalid input: reservoir.TraceError (and its kinds: a file that does not exist,
// reservoir.TraceFileNotFoundError; a snapshot without history, reservoir.NothingToReplay). From
// the reader it keeps the plain-words headline, the file and the byte offset.
struct TraceInputError : std::runtime_error {
  enum class Kind : std::uint8_t { kInput, kFileNotFound, kNothingToReplay };
  using std::runtime_error::runtime_error;
  TraceInputError(const std::string& message, Kind k, std::string file)
      : std::runtime_error(message), kind(k), path(std::move(file)) {}
  explicit TraceInputError(const Status& status)
      : std::runtime_error(status.message()), headline(status.headline()), path(status.file()) {
    if (status.hasByteOffset()) offset = status.byteOffset();
  }
  Kind kind = Kind::kInput;
  std::string headline;
  std::string path;
  std::optional<std::uint64_t> offset;
};

// An output that could not be written: OSError.
struct OutputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A loaded trace and the device chosen in it.
struct LoadedTrace {
  replay::Trace trace;
  std::size_t device_index = 0;
  std::optional<std::int64_t> device_asked;  // the CUDA device asked for at load (info: else every device)
  // A snapshot without allocation history: the library's sentence (replay::nothingToReplay).
  // It loads (info works); every replay raises NothingToReplay with it.
  std::optional<std::string> nothing_to_replay;

  [[nodiscard]] bool hasDevice() const { return device_index < trace.snap().devices.size(); }
  [[nodiscard]] std::optional<std::int64_t> device() const {
    if (!hasDevice()) return std::nullopt;
    return trace.snap().devices[device_index].device;
  }
};

// `capture`: a capture JSON to use (X.json's part); `use_capture_json`: read X.json beside `path`.
LoadedTrace loadPath(const std::string& path, std::optional<std::int64_t> device, bool use_capture_json,
                     const std::optional<std::string>& capture, const py::object& progress);
LoadedTrace loadBytes(const py::bytes& data, const std::string& name, std::optional<std::int64_t> device,
                      const std::optional<std::string>& capture, const py::object& progress);

std::string infoJson(const LoadedTrace& t, const py::object& progress, bool peak_allocated);

struct CheckText {
  std::vector<std::string> reset_peaks;
  replay::RecordedDeviceText device;
  bool expensive = false;
};
// One trace: its report (`check --json`); several: {"traces", "exact", "not_exact", "unreadable"}.
std::string checkJson(const std::vector<const LoadedTrace*>& traces, const CheckText& text, const py::object& progress);

// One trace: its report; several: {"traces": [...], "max_over_traces": {...}}. `jobs` traces at
// once (0: every core).
std::string whatifJson(const std::vector<const LoadedTrace*>& traces, const replay::WhatIfText& text, unsigned jobs,
                       const py::object& progress);

struct SweepText {
  std::string minimize = "peak";
  std::size_t top = 10;
  std::size_t max_candidates = 100;
  unsigned jobs = 0;  // 0: every core
  bool try_settings = true;
  replay::EditedRunText device;
  std::optional<std::size_t> max_calls;  // empty_cache calls in the whole trace (default: one per step)
  std::optional<std::size_t> steps;      // training steps, where the trace does not show them
};
// One trace's sweep, or several traces' (each candidate scored on its worst trace), as `sweep --json`.
std::string sweepJson(const std::vector<const LoadedTrace*>& traces, const SweepText& text, const py::object& progress);

// Writes the edited run; returns {"trace", "out", "csv", "events", "segments", "rows"} as JSON.
// The outputs are checked as the command line checks them (replay::checkExportTargets).
std::string exportRun(const LoadedTrace& t, const replay::WhatIfText& text, const std::string& out,
                      const std::string& csv, const py::object& progress);

struct GateOutcome {
  std::string json;
  bool pass = true;
  bool undecided = false;
  std::string reason;   // the failing (else undecided) condition's; empty on a pass
  std::string summary;  // every condition's
};
GateOutcome gate(const std::vector<const LoadedTrace*>& traces, const std::string& max_peak_reserved,
                 const replay::WhatIfText& text, const py::object& progress);

// One input of a scale: a loaded capture and its parameters ("world=2,seq=4096"; none: from the
// capture sidecar beside the trace's file).
struct ScaleInput {
  const LoadedTrace* trace = nullptr;
  std::optional<std::string> params;
};
struct ScaleText {
  std::vector<std::string> to;  // "world=64,seq=16384" (value lists make a grid)
  replay::WhatIfText edits;
  std::string out;                        // write the predicted trace here (one target)
  const LoadedTrace* measured = nullptr;  // a capture of the target (one target)
  std::size_t max_unexplained = 20;
};
// `scale --json`: one target's answer (with "out" and "check" when asked), or {"targets": [...]}.
std::string scaleJson(const std::vector<ScaleInput>& inputs, const ScaleText& text, const py::object& progress);

// `reservoir report --json`: the report of the recording, the edited run and each variant over
// the traces (ranks), with the page written to `html` and the table to `markdown` (empty: not
// written), both checked first as the command line checks them (replay::checkReportTargets).
struct ReportCall {
  replay::ReportText text;
  std::string html, markdown;
};
std::string reportJson(const std::vector<const LoadedTrace*>& traces, const ReportCall& call,
                       const py::object& progress);

// "world=2,seq=4096:A.pickle" -> ("world=2,seq=4096", "A.pickle"); "A.pickle" -> (None, "A.pickle").
std::pair<std::optional<std::string>, std::string> splitScaleInput(const std::string& spec);

}  // namespace reservoir::python
