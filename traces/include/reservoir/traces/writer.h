// Writing a Snapshot back as a torch.cuda.memory._snapshot() pickle (protocols 2-5, optionally
// gzip/zstd), with the structure torch writes: the keys, their order and value types that
// Python's pickle, PyTorch's MemoryViz.js and our reader expect.
//
// Opcodes are Python's choices (minimal integer widths, 64 KiB frames and MEMOIZE for 4-5,
// BINPUT for 2-3, batches of 1000 items). Strings, frame dicts and frame lists are memoised,
// so a stack shared by many entries is written once. Output is streamed: memory stays bounded
// by one frame, not by the size of the snapshot.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "reservoir/core/status.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::traces {

struct WriteOptions {
  // 4 is what pickle.dump writes by default on Python 3.8-3.13 (and the highest MemoryViz.js
  // reads); 2 is what LibTorch's C++ pickler writes.
  int protocol = 4;
  Compression compression = Compression::kNone;
  // zlib level (1-9) or zstd level (1-19); 0 picks the library's default.
  int compression_level = 0;
  // Looked at before each frame is written: once set, the write stops and fails ("cancelled"),
  // and writeSnapshotFile leaves no file (the temporary is removed, an existing file is kept).
  const std::atomic<bool>* cancel = nullptr;
};

// Writes `snapshot` to `path` (through a temporary file renamed into place).
Status writeSnapshotFile(const Snapshot& snapshot, const std::string& path, const WriteOptions& options = {});

// Writes `bytes` to `path` as writeSnapshotFile writes a file: a regular file through a
// temporary (X.tmp, a new file: an existing one is an error, never followed or overwritten)
// renamed into place (removed on failure); a device, pipe or symbolic link in place (never
// replaced); every write and the close checked. For the CLI's other outputs (CSV).
Status writeOutputFile(const std::string& path, std::string_view bytes);

// Removes the temporary files (X.tmp) that writeSnapshotFile and writeOutputFile have open right
// now, and nothing else (a temporary is only ever a file this process created). Async-signal-safe:
// a front end's handler for SIGINT, SIGTERM, SIGHUP, ... calls it, so that an interrupted write
// leaves no X.tmp behind.
void removeTemporaryFilesNow() noexcept;

// The bytes writeSnapshotFile would write.
Expected<std::vector<std::uint8_t>> writeSnapshotBytes(const Snapshot& snapshot, const WriteOptions& options = {});

}  // namespace reservoir::traces
