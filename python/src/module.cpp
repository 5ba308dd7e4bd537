// reservoir._core: the replay library for Python. Each call releases the GIL while it works
// (interruptible.h) and returns the library's JSON rendering as text; python/reservoir/api.py
// turns it into dicts and gives the calls their Python signatures (docs/python.md).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "calls.h"
#include "cli.h"
#include "interruptible.h"
#include "reservoir/replay/option_text.h"
#include "reservoir/traces/dump_folder.h"

namespace py = pybind11;
using reservoir::python::LoadedTrace;

namespace {

// Text the command line writes, kept until the calling thread hands it to Python (the command
// may write from any of its threads; only the calling thread may touch sys.stdout).
class TextBuffer final : public std::streambuf {
 public:
  std::string take() {
    std::lock_guard lock(m_);
    std::string out;
    out.swap(text_);
    return out;
  }

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    std::lock_guard lock(m_);
    text_.push_back(traits_type::to_char_type(c));
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    std::lock_guard lock(m_);
    text_.append(s, static_cast<std::size_t>(n));
    return n;
  }

 private:
  std::mutex m_;
  std::string text_;
};

// Hands what the command wrote so far to Python's streams (with the GIL): `write` is sys.stdout's
// (or sys.stderr's) write, looked up by the caller. The first error is kept and raised at the end.
class PythonStream {
 public:
  explicit PythonStream(py::object write) : write_(std::move(write)) {}
  std::ostream& stream() { return stream_; }
  void drain() {
    const std::string text = buffer_.take();
    if (text.empty() || error_) return;
    try {
      py::object s = py::reinterpret_steal<py::object>(
          PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "surrogateescape"));
      if (!s) throw py::error_already_set();
      write_(s);
    } catch (py::error_already_set& e) {
      error_.emplace(std::move(e));
    }
  }
  void raiseIfFailed() {
    if (error_) throw *error_;
  }

 private:
  py::object write_;
  TextBuffer buffer_;
  std::ostream stream_{&buffer_};
  std::optional<py::error_already_set> error_;
};

// `reservoir ARGS...` in this process (python3 -m reservoir, reservoir.__main__.main(argv)): the
// command line's own entry point, its output through `out` and `err` (sys.stdout.write and
// sys.stderr.write), handed over every 10 ms and at the end.
int cliMain(const std::vector<std::string>& args, const py::object& out, const py::object& err) {
  std::vector<const char*> argv{"reservoir"};
  for (const auto& a : args) argv.push_back(a.c_str());
  PythonStream py_out(out), py_err(err);
  reservoir::python::Interruptible job(py::none(), [&] {
    py_out.drain();
    py_err.drain();
  });
  const int rc = job.run([&] {
    const int code =
        reservoir::cli::runCli(static_cast<int>(argv.size()), argv.data(), py_out.stream(), py_err.stream());
    py_out.stream().flush();
    py_err.stream().flush();
    return code;
  });
  py_out.drain();
  py_err.drain();
  py_err.raiseIfFailed();
  py_out.raiseIfFailed();
  return rc;
}

void bindTexts(py::module_& m) {
  using reservoir::replay::EditedRunText;
  using reservoir::replay::WhatIfText;
  py::class_<EditedRunText>(m, "EditedRunText")
      .def(py::init<>())
      .def_readwrite("set", &EditedRunText::set)
      .def_readwrite("capacity", &EditedRunText::capacity)
      .def_readwrite("overhead", &EditedRunText::overhead)
      .def_readwrite("fraction", &EditedRunText::fraction);
  py::class_<WhatIfText>(m, "WhatIfText")
      .def(py::init<>())
      .def_readwrite("cleanup", &WhatIfText::cleanup)
      .def_readwrite("release", &WhatIfText::release)
      .def_readwrite("probe", &WhatIfText::probe)
      .def_readwrite("demand", &WhatIfText::demand)
      .def_readwrite("reset_peaks", &WhatIfText::reset_peaks)
      .def_readwrite("device", &WhatIfText::device)
      .def_readwrite("address_model", &WhatIfText::address_model);
}

void bindTrace(py::module_& m) {
  namespace rp = reservoir::python;
  py::class_<LoadedTrace>(m, "Trace")
      .def_property_readonly("path", [](const LoadedTrace& t) { return t.trace.path; })
      .def_property_readonly("device", &LoadedTrace::device)
      .def_property_readonly("device_asked", [](const LoadedTrace& t) { return t.device_asked; })
      .def_property_readonly(
          "events",
          [](const LoadedTrace& t) { return t.hasDevice() ? t.trace.snap().devices[t.device_index].events.size() : 0; })
      .def_property_readonly("capture_json",
                             [](const LoadedTrace& t) -> std::optional<std::string> {
                               if (!t.trace.capture) return std::nullopt;
                               return t.trace.capture->path;
                             })
      .def_property_readonly("nothing_to_replay", [](const LoadedTrace& t) { return t.nothing_to_replay; })
      .def("info_json", &rp::infoJson, py::arg("progress") = py::none(), py::arg("peak_allocated") = false)
      .def("export_json", &rp::exportRun, py::arg("text"), py::arg("out"), py::arg("csv"), py::arg("progress"));
}

// Python's exception for each kind of error the calls throw: reservoir._errors' classes, looked
// up when raised (so an importlib.reload of the package raises its current classes).
void registerErrors() {
  namespace rp = reservoir::python;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const rp::TraceInputError& e) {
      const char* name = e.kind == rp::TraceInputError::Kind::kFileNotFound      ? "TraceFileNotFoundError"
                         : e.kind == rp::TraceInputError::Kind::kNothingToReplay ? "NothingToReplay"
                                                                                 : "TraceError";
      py::object cls = py::module_::import("reservoir._errors").attr(name);
      py::object value =
          cls(e.what(), py::arg("headline") = e.headline.empty() ? py::none() : py::object(py::str(e.headline)),
              py::arg("path") = e.path.empty() ? py::none() : py::object(py::str(e.path)),
              py::arg("offset") = e.offset ? py::object(py::int_(*e.offset)) : py::none());
      PyErr_SetObject(cls.ptr(), value.ptr());
    } catch (const rp::OutputError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    }
  });
}

void bindCalls(py::module_& m) {
  namespace rp = reservoir::python;
  using Traces = std::vector<const LoadedTrace*>;
  m.def("load_path", &rp::loadPath, py::arg("path"), py::arg("device"), py::arg("use_capture_json"), py::arg("capture"),
        py::arg("progress"));
  m.def("load_bytes", &rp::loadBytes, py::arg("data"), py::arg("name"), py::arg("device"), py::arg("capture"),
        py::arg("progress"));
  m.def(
      "check_json",
      [](const Traces& traces, std::vector<std::string> reset_peaks, std::optional<double> fraction,
         std::string capacity, bool expensive, const py::object& progress) {
        rp::CheckText text{std::move(reset_peaks), {fraction, std::move(capacity), std::nullopt}, expensive};
        return rp::checkJson(traces, text, progress);
      },
      py::arg("traces"), py::arg("reset_peaks"), py::arg("fraction"), py::arg("capacity"), py::arg("expensive"),
      py::arg("progress"));
  m.def("whatif_json", &rp::whatifJson, py::arg("traces"), py::arg("text"), py::arg("jobs"), py::arg("progress"));
  m.def(
      "sweep_json",
      [](const Traces& traces, std::string minimize, std::size_t top, std::size_t max_candidates, unsigned jobs,
         bool try_settings, reservoir::replay::EditedRunText device, std::optional<std::size_t> max_calls,
         std::optional<std::size_t> steps, const py::object& progress) {
        rp::SweepText text{std::move(minimize), top,       max_candidates, jobs, try_settings,
                           std::move(device),   max_calls, steps};
        return rp::sweepJson(traces, text, progress);
      },
      py::arg("traces"), py::arg("minimize"), py::arg("top"), py::arg("max_candidates"), py::arg("jobs"),
      py::arg("try_settings"), py::arg("device"), py::arg("max_calls"), py::arg("steps"), py::arg("progress"));
  m.def(
      "gate",
      [](const Traces& traces, const std::string& budget, const reservoir::replay::WhatIfText& text,
         const py::object& progress) {
        auto g = rp::gate(traces, budget, text, progress);
        return py::make_tuple(g.json, g.pass, g.undecided, g.reason, g.summary);
      },
      py::arg("traces"), py::arg("max_peak_reserved"), py::arg("text"), py::arg("progress"));
  m.def(
      "scale_json",
      [](const std::vector<std::pair<const LoadedTrace*, std::optional<std::string>>>& inputs,
         std::vector<std::string> to, reservoir::replay::WhatIfText edits, std::string out, const LoadedTrace* measured,
         std::size_t max_unexplained, const py::object& progress) {
        std::vector<rp::ScaleInput> in;
        for (const auto& [trace, params] : inputs) in.push_back({trace, params});
        rp::ScaleText text{std::move(to), std::move(edits), std::move(out), measured, max_unexplained};
        return rp::scaleJson(in, text, progress);
      },
      py::arg("inputs"), py::arg("to"), py::arg("edits"), py::arg("out"), py::arg("measured").none(true),
      py::arg("max_unexplained"), py::arg("progress"));
  m.def(
      "report_json",
      [](const Traces& traces, reservoir::replay::WhatIfText edits,
         std::vector<std::pair<std::string, reservoir::replay::WhatIfText>> variants, bool sweep, std::string minimize,
         std::size_t top, std::size_t max_candidates, unsigned jobs, std::string html, std::string markdown,
         const py::object& progress) {
        rp::ReportCall call;
        call.text.edits = std::move(edits);
        call.text.variants = std::move(variants);
        call.text.sweep = sweep;
        call.text.minimize = std::move(minimize);
        call.text.sweep_top = top;
        call.text.max_candidates = max_candidates;
        call.text.jobs = jobs;
        call.html = std::move(html);
        call.markdown = std::move(markdown);
        return rp::reportJson(traces, call, progress);
      },
      py::arg("traces"), py::arg("edits"), py::arg("variants"), py::arg("sweep"), py::arg("minimize"), py::arg("top"),
      py::arg("max_candidates"), py::arg("jobs"), py::arg("html"), py::arg("markdown"), py::arg("progress"));
  m.def("split_scale_input", &rp::splitScaleInput, py::arg("spec"));
  // A dump folder as its snapshots, ordered by rank (traces::snapshotsInFolder, the rule the command
  // line uses): [(path, rank or None)]. An iteration that is not there: ValueError; else TraceError.
  m.def(
      "snapshots_in_folder",
      [](const std::string& dir, std::optional<std::int64_t> iteration) {
        auto ranked = reservoir::traces::snapshotsInFolder(dir, iteration);
        if (!ranked && ranked.status().isUsage()) throw py::value_error("iteration=: " + ranked.message());
        if (!ranked) throw rp::TraceInputError(ranked.message(), rp::TraceInputError::Kind::kInput, dir);
        std::vector<std::pair<std::string, std::optional<std::int64_t>>> out;
        for (auto& r : *ranked) out.emplace_back(std::move(r.path), r.rank);
        return out;
      },
      py::arg("dir"), py::arg("iteration"));
  m.def("is_folder", &reservoir::traces::isFolder, py::arg("path"));
  m.def("main", &cliMain, py::arg("args"), py::arg("out"), py::arg("err"),
        "Runs the reservoir command line with ARGS, writing through out(text) and err(text); returns its exit code");
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "Reservoir's replay library (the compiled part of the reservoir package; use its Python API)";
  // RESERVOIR_MAX_MEMORY raises the reader's memory cap, as for the CLI and the GUI.
  if (reservoir::Status st = reservoir::replay::applyMemoryCapFromEnvironment(); !st.ok())
    throw py::value_error(st.message());
  reservoir::replay::applySnapshotCacheFromEnvironment();  // RESERVOIR_CACHE, as for the CLI and the GUI
  registerErrors();
  bindTexts(m);
  bindTrace(m);
  bindCalls(m);
  // At exit, calls still running on other threads are cancelled and never take the GIL again.
  py::module_::import("atexit").attr("register")(
      py::cpp_function([] { reservoir::python::ExitGate::instance().onPythonExit(); }));
}
