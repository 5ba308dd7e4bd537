// reservoir._core: the replay library for Python. Each call releases the GIL while it works
// (interruptible.h) and returns the library's JSON rendering as text; python/reservoir/api.py
// turns it into dicts and gives the calls their Python signatures (docs/python.md).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <iostream>
#include <string>
#include <vector>

#include "calls.h"
#include "cli.h"
#include "reservoir/replay/option_text.h"

namespace py = pybind11;
using reservoir::python::LoadedTrace;

namespace {

// `reservoir ARGS...` in this process (python3 -m reservoir): the command line's own entry point.
int cliMain(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"reservoir"};
  for (const auto& a : args) argv.push_back(a.c_str());
  py::gil_scoped_release release;
  const int rc = reservoir::cli::runCli(static_cast<int>(argv.size()), argv.data(), std::cout, std::cerr);
  std::cout.flush();
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
      .def_property_readonly(
          "events",
          [](const LoadedTrace& t) { return t.hasDevice() ? t.trace.snap().devices[t.device_index].events.size() : 0; })
      .def("info_json", &rp::infoJson, py::arg("progress") = py::none())
      .def(
          "check_json",
          [](const LoadedTrace& t, std::vector<std::string> reset_peaks, std::optional<double> fraction,
             std::string capacity, bool expensive, const py::object& progress) {
            rp::CheckText text{std::move(reset_peaks), {fraction, std::move(capacity), ""}, expensive};
            return rp::checkJson(t, text, progress);
          },
          py::arg("reset_peaks"), py::arg("fraction"), py::arg("capacity"), py::arg("expensive"), py::arg("progress"))
      .def(
          "sweep_json",
          [](const LoadedTrace& t, std::string minimize, std::size_t top, std::size_t max_candidates, unsigned jobs,
             bool try_settings, reservoir::replay::EditedRunText device, std::optional<std::size_t> max_calls,
             std::optional<std::size_t> steps, const py::object& progress) {
            rp::SweepText text{std::move(minimize), top,       max_candidates, jobs, try_settings,
                               std::move(device),   max_calls, steps};
            return rp::sweepJson(t, text, progress);
          },
          py::arg("minimize"), py::arg("top"), py::arg("max_candidates"), py::arg("jobs"), py::arg("try_settings"),
          py::arg("device"), py::arg("max_calls"), py::arg("steps"), py::arg("progress"))
      .def("export_json", &rp::exportRun, py::arg("text"), py::arg("out"), py::arg("csv"), py::arg("progress"));
}

// reservoir.TraceError: the message (plain words first), and .headline, .path and .offset (the
// byte in the pickle stream, or None) when the reader made it.
void registerTraceError(py::module_& m) {
  namespace rp = reservoir::python;
  static py::exception<rp::TraceInputError> error(m, "TraceError", PyExc_Exception);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const rp::TraceInputError& e) {
      py::object value = py::handle(error.ptr())(e.what());  // an instance of TraceError
      value.attr("headline") = e.headline.empty() ? py::none() : py::object(py::str(e.headline));
      value.attr("path") = e.path.empty() ? py::none() : py::object(py::str(e.path));
      value.attr("offset") = e.offset ? py::object(py::int_(*e.offset)) : py::none();
      PyErr_SetObject(error.ptr(), value.ptr());
    }
  });
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  namespace rp = reservoir::python;
  m.doc() = "Reservoir's replay library (the compiled part of the reservoir package; use its Python API)";
  // RESERVOIR_MAX_MEMORY raises the reader's memory cap, as for the CLI and the GUI.
  if (reservoir::Status st = reservoir::replay::applyMemoryCapFromEnvironment(); !st.ok())
    throw py::value_error(st.message());
  registerTraceError(m);
  bindTexts(m);
  bindTrace(m);
  m.def("load_path", &rp::loadPath, py::arg("path"), py::arg("device"), py::arg("use_capture_json"), py::arg("capture"),
        py::arg("progress"));
  m.def("load_bytes", &rp::loadBytes, py::arg("data"), py::arg("name"), py::arg("device"), py::arg("capture"),
        py::arg("progress"));
  m.def("whatif_json", &rp::whatifJson, py::arg("traces"), py::arg("text"), py::arg("progress"));
  m.def(
      "gate",
      [](const std::vector<const LoadedTrace*>& traces, const std::string& budget,
         const reservoir::replay::WhatIfText& text, const py::object& progress) {
        auto g = rp::gate(traces, budget, text, progress);
        return py::make_tuple(g.json, g.pass, g.undecided, g.reason, g.summary);
      },
      py::arg("traces"), py::arg("max_peak_reserved"), py::arg("text"), py::arg("progress"));
  m.def("main", &cliMain, py::arg("args"), "Runs the reservoir command line with ARGS; returns its exit code");
}
