#include "common.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "reservoir/replay/conformance.h"
#include "reservoir/replay/option_text.h"
#include "reservoir/simulator/sizes.h"

namespace reservoir::cli {

namespace {

std::string flagOf(replay::Input input) {
  std::string name(replay::inputName(input));
  for (char& c : name)
    if (c == '_') c = '-';
  return "--" + name;
}

std::string flagWithValue(replay::Input input, std::string_view value) {
  return flagOf(input) + " " + std::string(value);
}

std::string commandLine(replay::Command command) {
  return command == replay::Command::kInfo ? "'reservoir info'" : "'reservoir check'";
}

}  // namespace

const replay::Wording& cliWording() {
  static const replay::Wording wording{&flagOf, &flagOf, &flagWithValue, &commandLine};
  return wording;
}

CLI::Validator fractionCheck() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v) || !(v >= 0.0 && v <= 1.0))
          return "'" + text + "' is not a fraction in [0, 1]";
        return {};
      },
      "FRACTION in [0, 1]");
}

void addEnvOptions(CLI::App* app, EnvOptions* env) {
  app->add_option("--fraction", env->fraction,
                  "the recorded device's memory fraction (set_per_process_memory_fraction); default: capture JSON or 1")
      ->check(fractionCheck());
  app->add_option("--capacity", env->capacity,
                  "the recorded device's total memory, e.g. 141GiB; default: capture JSON or an H200's");
  app->add_option_function<std::string>(
      "--settings", [env](const std::string& text) { env->settings = text; },
      "the recorded device's PYTORCH_CUDA_ALLOC_CONF, to replay with instead of the one the trace records (as a "
      "whole, as the environment variable is read: '' is torch's defaults)");
  app->add_flag("--no-capture-json", env->no_capture_json, "ignore X.json beside X.pickle");
}

void addIterationOption(CLI::App* app, std::optional<std::int64_t>* iteration) {
  app->add_option("--iteration", *iteration,
                  "of a dump folder given as TRACE (memory_snapshot/iteration_N[_exit]/): iteration N instead of the "
                  "newest")
      ->check(CLI::NonNegativeNumber);
}

Progress::Progress(std::ostream& err, std::string label)
    : err_(err), label_(std::move(label)), tty_(::isatty(2) != 0) {}

Progress::~Progress() {
  if (tty_ && last_ >= 0) err_ << "\r\033[K" << std::flush;
}

void Progress::operator()(std::uint64_t done, std::uint64_t total) {
  if (!tty_ || total == 0) return;
  const int pct = static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total));
  if (pct == last_) return;
  last_ = pct;
  err_ << "\r" << label_ << " " << pct << "%" << std::flush;
}

Expected<replay::Trace> loadTrace(const std::string& path, std::ostream& err, bool use_capture_json) {
  // '-' is the command line's name for standard input elsewhere; here it would open a file named '-'.
  if (path == "-")
    return Status::usage("'-': a snapshot is not read from standard input; give its file ('./-' for a file named '-')");
  Progress progress(err, "reading " + path);
  replay::TraceReadOptions opts;
  opts.use_capture_json = use_capture_json;
  opts.progress = [&](std::uint64_t d, std::uint64_t t) { progress(d, t); };
  return replay::readTrace(path, opts);
}

Expected<replay::ReplayEnvironment> makeEnvironment(const EnvOptions& opts, const replay::Trace& trace) {
  return replay::replayEnvironment(trace, {opts.fraction, opts.capacity, opts.settings}, cliWording());
}

Expected<OpenTrace> openTrace(const std::string& path, std::optional<std::int64_t> device, const EnvOptions& opts,
                              std::ostream& err) {
  auto trace = loadTrace(path, err, !opts.no_capture_json);
  if (!trace) return trace.status();
  if (auto none = replay::nothingToReplay(trace->snap(), std::nullopt, cliWording()); none && !device) {
    OpenTrace empty{std::move(*trace), 0, {}, std::nullopt};
    empty.nothing_to_replay = path + ": " + *none;
    return empty;
  }
  auto dev = replay::chooseDevice(trace->snap(), device);
  if (!dev) return Status::error(path + ": " + dev.message());
  auto env = makeEnvironment(opts, *trace);
  if (!env) return env.status();
  OpenTrace opened{std::move(*trace), *dev, std::move(*env), std::nullopt};
  if (auto none = replay::nothingToReplay(opened.trace.snap(), *dev, cliWording()))
    opened.nothing_to_replay = path + ": " + *none;
  return opened;
}

std::string sizeText(std::int64_t bytes) {
  if (bytes < 0) return fmt::format("-{} ({} bytes)", sim::formatSize(static_cast<std::uint64_t>(-bytes)), bytes);
  return fmt::format("{} ({} bytes)", sim::formatSize(static_cast<std::uint64_t>(bytes)), bytes);
}

Expected<unsigned> threadCount(std::optional<unsigned> jobs, std::ostream& err) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  if (!jobs) return cores;
  if (*jobs == 0) return Status::error("--jobs 0: give at least 1 thread (or leave --jobs out for every core)");
  if (*jobs > cores) {
    err << fmt::format("reservoir: note: --jobs {} is more than the {} core(s) here; using {}\n", *jobs, cores, cores);
    return cores;
  }
  return *jobs;
}

}  // namespace reservoir::cli
