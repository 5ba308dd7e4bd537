// One loaded trace, the one type every front end (CLI, GUI, Python, the MPI driver) opens a
// snapshot into: the immutable snapshot under shared ownership, the facts its capture wrote
// beside it (X.json), and where it came from. Copies are cheap and share the snapshot, so a
// replay, a prepared program or a GUI stage can keep it alive without pinning anything.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "reservoir/core/status.h"
#include "reservoir/replay/capture_facts.h"
#include "reservoir/replay/conformance.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::replay {

struct Trace {
  std::string path;  // the file, or the name given for a snapshot read from memory
  std::shared_ptr<const traces::Snapshot> snapshot;
  std::shared_ptr<const CaptureFacts> capture;  // X.json beside X.pickle; null when none

  [[nodiscard]] const traces::Snapshot& snap() const { return *snapshot; }
  // The recorded device as the capture describes it (its facts; nothing chosen by a user).
  [[nodiscard]] ReplayEnvironment environment() const;
};

struct TraceReadOptions {
  bool use_capture_json = true;  // read X.json beside X.pickle
  std::function<void(std::uint64_t done, std::uint64_t total)> progress;
  const std::atomic<bool>* cancel = nullptr;
};

// Reads the snapshot stored in `path` (.pickle, .gz, .zst) and the capture facts beside it.
Expected<Trace> readTrace(const std::string& path, const TraceReadOptions& options = {});
// Reads a snapshot held in memory (e.g. pickled in-process from torch.cuda.memory._snapshot());
// `name` is used in error messages. `capture`, when given, plays the part of X.json.
Expected<Trace> readTraceBytes(std::span<const std::uint8_t> bytes, const std::string& name,
                               std::shared_ptr<const CaptureFacts> capture = nullptr,
                               const TraceReadOptions& options = {});
// Wraps a snapshot already in memory (tests, the scale synthesiser, exports read back).
Trace makeTrace(traces::Snapshot snapshot, std::string path, std::shared_ptr<const CaptureFacts> capture = nullptr);

// The device index for a CUDA device number, or the busiest device when none is given.
Expected<std::size_t> chooseDevice(const traces::Snapshot& snapshot, std::optional<std::int64_t> cuda_device);

}  // namespace reservoir::replay
