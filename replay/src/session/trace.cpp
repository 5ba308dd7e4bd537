// Opening a trace: the snapshot (read once, shared) and its capture facts.
#include "reservoir/replay/trace.h"

#include <fmt/format.h>

#include "reservoir/traces/reader.h"

namespace reservoir::replay {
namespace {

traces::ReadOptions readOptions(const TraceReadOptions& o) {
  traces::ReadOptions r;
  r.progress = o.progress;
  r.cancel = o.cancel;
  return r;
}

}  // namespace

ReplayEnvironment Trace::environment() const {
  ReplayEnvironment env;
  env.capture = capture;
  return env;
}

Expected<Trace> readTrace(const std::string& path, const TraceReadOptions& options) {
  // The sidecar first: one that cannot be used is refused before a long read.
  std::shared_ptr<const CaptureFacts> capture;
  if (options.use_capture_json) {
    auto facts = captureFactsBeside(path);
    if (!facts) return facts.status();
    if (*facts) capture = std::make_shared<const CaptureFacts>(std::move(**facts));
  }
  auto snap = traces::readSnapshotFile(path, readOptions(options));
  if (!snap) return snap.status();
  return makeTrace(std::move(*snap), path, std::move(capture));
}

Expected<Trace> readTraceBytes(std::span<const std::uint8_t> bytes, const std::string& name,
                               std::shared_ptr<const CaptureFacts> capture, const TraceReadOptions& options) {
  auto snap = traces::readSnapshotBytes(bytes, name, readOptions(options));
  if (!snap) return snap.status();
  return makeTrace(std::move(*snap), name, std::move(capture));
}

Trace makeTrace(traces::Snapshot snapshot, std::string path, std::shared_ptr<const CaptureFacts> capture) {
  return Trace{std::move(path), std::make_shared<const traces::Snapshot>(std::move(snapshot)), std::move(capture)};
}

Expected<std::size_t> chooseDevice(const traces::Snapshot& snapshot, std::optional<std::int64_t> cuda_device) {
  if (snapshot.devices.empty()) return Status::error("the snapshot has no device traces");
  if (!cuda_device) return snapshot.busiestDevice();
  for (std::size_t i = 0; i < snapshot.devices.size(); ++i)
    if (snapshot.devices[i].device == *cuda_device) return i;
  return Status::error(
      fmt::format("no device {} in the snapshot (it has devices 0..{})", *cuda_device, snapshot.devices.size() - 1));
}

}  // namespace reservoir::replay
