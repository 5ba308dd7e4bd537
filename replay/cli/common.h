// Pieces every subcommand uses: loading a trace (with progress on a TTY), choosing the device,
// the replay environment options, printing sizes.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <ostream>
#include <string>

#include "reservoir/core/status.h"
#include "reservoir/replay/capture_facts.h"
#include "reservoir/replay/conformance.h"
#include "reservoir/replay/trace.h"
#include "reservoir/replay/wording.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::cli {

// How the library's messages name inputs and commands on the command line: "--capacity",
// "--reset-peaks event:7", "'reservoir check'".
const replay::Wording& cliWording();

// --fraction's check: a number in [0, 1] (CLI::Range lets nan through).
CLI::Validator fractionCheck();

struct EnvOptions {
  std::optional<double> fraction;
  std::string capacity;  // a size ("141GiB"), parsed later
  std::optional<std::string> settings;  // given: the whole PYTORCH_CUDA_ALLOC_CONF ("" is torch's defaults)
  bool no_capture_json = false;
};

void addEnvOptions(CLI::App* app, EnvOptions* env);

// --iteration N: which iteration of a torchtitan dump folder (given among the traces) to read.
void addIterationOption(CLI::App* app, std::optional<std::int64_t>* iteration);

// Reads `path` (and X.json beside it unless told not to), showing progress on stderr when it is
// a terminal.
Expected<replay::Trace> loadTrace(const std::string& path, std::ostream& err, bool use_capture_json);

// The environment for replays: options first, then the capture's JSON.
Expected<replay::ReplayEnvironment> makeEnvironment(const EnvOptions& opts, const replay::Trace& trace);

// A trace opened for replay: read, its device chosen, its replay environment made.
struct OpenTrace {
  replay::Trace trace;
  std::size_t device = 0;
  replay::ReplayEnvironment env;
  // Set when the snapshot has no allocation history: what to print instead of a replay
  // (exit 0); `device` is then meaningless.
  std::optional<std::string> nothing_to_replay;
};
// loadTrace + replay::chooseDevice + makeEnvironment; a device error names the file.
Expected<OpenTrace> openTrace(const std::string& path, std::optional<std::int64_t> device, const EnvOptions& opts,
                              std::ostream& err);

// A progress reporter for long work: prints "label 45%" on stderr when it is a TTY.
class Progress {
 public:
  Progress(std::ostream& err, std::string label);
  ~Progress();
  void operator()(std::uint64_t done, std::uint64_t total);

 private:
  std::ostream& err_;
  std::string label_;
  bool tty_;
  int last_ = -1;
};

// --jobs N: at least 1, at most the cores there are (more threads only add memory and
// switching; a note says so); left out, every core. 0 is an error.
Expected<unsigned> threadCount(std::optional<unsigned> jobs, std::ostream& err);

std::string sizeText(std::int64_t bytes);  // "25.34 GiB (27216838656 bytes)"

}  // namespace reservoir::cli
