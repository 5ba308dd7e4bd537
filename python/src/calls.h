// What reservoir._core does: each call is the library's, as the command line makes it, and
// returns the library's JSON rendering (replay/report_json.h) as text for Python to load.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "reservoir/replay/option_text.h"
#include "reservoir/replay/trace.h"

namespace reservoir::python {

namespace py = pybind11;

// Unreadable or invalid input: reservoir.TraceError. From the reader it keeps the plain-words
// headline, the file and the byte offset (TraceError's .headline, .path, .offset).
struct TraceInputError : std::runtime_error {
  using std::runtime_error::runtime_error;
  explicit TraceInputError(const Status& status)
      : std::runtime_error(status.message()), headline(status.headline()), path(status.file()) {
    if (status.hasByteOffset()) offset = status.byteOffset();
  }
  std::string headline;
  std::string path;
  std::optional<std::uint64_t> offset;
};

// A loaded trace and the device chosen in it.
struct LoadedTrace {
  replay::Trace trace;
  std::size_t device_index = 0;
  std::optional<std::int64_t> device_asked;  // the CUDA device asked for at load (info: else every device)
  // A snapshot without allocation history: the library's sentence (replay::nothingToReplay),
  // which check and whatif return instead of a report, as the command line prints it.
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

std::string infoJson(const LoadedTrace& t, const py::object& progress);

struct CheckText {
  std::vector<std::string> reset_peaks;
  replay::RecordedDeviceText device;
  bool expensive = false;
};
std::string checkJson(const LoadedTrace& t, const CheckText& text, const py::object& progress);

std::string whatifJson(const std::vector<const LoadedTrace*>& traces, const replay::WhatIfText& text,
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
std::string sweepJson(const LoadedTrace& t, const SweepText& text, const py::object& progress);

// Writes the edited run; returns {"out": .., "csv": .., "events": .., "segments": .., "rows": ..} as JSON.
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

}  // namespace reservoir::python
