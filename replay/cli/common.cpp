#include "common.h"

#include <fmt/format.h>
#include <unistd.h>

#include "reservoir/simulator/sizes.h"
#include "reservoir/traces/reader.h"

namespace reservoir::cli {

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
  app->add_option("--settings", env->settings,
                  "the recorded device's PYTORCH_CUDA_ALLOC_CONF, to replay with instead of the one the trace records");
  app->add_flag("--no-capture-json", env->no_capture_json, "ignore X.json beside X.pickle");
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

Expected<LoadedTrace> loadTrace(const std::string& path, std::ostream& err, bool use_capture_json) {
  Progress progress(err, "reading " + path);
  traces::ReadOptions opts;
  opts.progress = [&](std::uint64_t d, std::uint64_t t) { progress(d, t); };
  auto snap = traces::readSnapshotFile(path, opts);
  if (!snap) return snap.status();
  LoadedTrace t{path, std::move(*snap), std::nullopt};
  if (use_capture_json) t.capture = replay::findCaptureFacts(path);
  return t;
}

Expected<std::size_t> chooseDevice(const traces::Snapshot& snap, std::optional<std::int64_t> device) {
  if (snap.devices.empty()) return Status::error("the snapshot has no device traces");
  if (!device) return snap.busiestDevice();
  for (std::size_t i = 0; i < snap.devices.size(); ++i)
    if (snap.devices[i].device == *device) return i;
  return Status::error(
      fmt::format("no device {} in the snapshot (it has devices 0..{})", *device, snap.devices.size() - 1));
}

Expected<replay::ReplayEnvironment> makeEnvironment(const EnvOptions& opts, const LoadedTrace& trace) {
  replay::ReplayEnvironment env;
  env.fraction = opts.fraction;
  if (!opts.capacity.empty()) {
    auto c = sim::parseSize(opts.capacity);
    if (!c) return Status::error("--capacity: not a size: '" + opts.capacity + "' (e.g. 141GiB, 150109880320)");
    env.total_memory = *c;
  }
  if (!opts.settings.empty()) {
    auto cfg = sim::parseAllocConf(opts.settings);
    if (!cfg) return Status::error("--settings: " + cfg.message());
    env.settings = opts.settings;
  }
  if (trace.capture) env.capture = &*trace.capture;
  return env;
}

Expected<OpenTrace> openTrace(const std::string& path, std::optional<std::int64_t> device, const EnvOptions& opts,
                              std::ostream& err) {
  auto loaded = loadTrace(path, err, !opts.no_capture_json);
  if (!loaded) return loaded.status();
  auto trace = std::make_unique<LoadedTrace>(std::move(*loaded));
  auto dev = chooseDevice(trace->snapshot, device);
  if (!dev) return Status::error(path + ": " + dev.message());
  auto env = makeEnvironment(opts, *trace);  // points into *trace
  if (!env) return env.status();
  return OpenTrace{std::move(trace), *dev, std::move(*env)};
}

std::string sizeText(std::int64_t bytes) {
  if (bytes < 0) return fmt::format("-{} ({} bytes)", sim::formatSize(static_cast<std::uint64_t>(-bytes)), bytes);
  return fmt::format("{} ({} bytes)", sim::formatSize(static_cast<std::uint64_t>(bytes)), bytes);
}

}  // namespace reservoir::cli
