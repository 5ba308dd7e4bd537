// Reading torch.cuda.memory._snapshot() pickles (protocols 2-5, optionally gzip/zstd).
//
// The reader never executes anything: GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ,
// NEWOBJ*, persistent ids, extension codes and out-of-band buffers are rejected. It builds
// the typed model directly while parsing (no tree of Python-like objects), in bounded
// memory and without recursion, and every error says what is wrong in plain words first (its
// class's headline, read_problem.h), then names the file, the byte offset in the pickle stream
// and what was expected.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "reservoir/core/status.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::traces {

// The most memory one read may use, whatever the file says (see ReadLimits::memory_cap_bytes):
// 1 GiB of what the reader counts (what its tables hold), so that the process stays under 2 GB
// while a table doubles (old and new copy) and while the trace is replayed. A real trace of more
// than several million entries needs a higher cap: front ends set it from RESERVOIR_MAX_MEMORY
// (replay::applyMemoryCapFromEnvironment). 0: no cap.
inline constexpr std::uint64_t kDefaultReadMemoryCap = 1ull << 30;
std::uint64_t defaultReadMemoryCap();
void setDefaultReadMemoryCap(std::uint64_t bytes);

struct ReadLimits {
  std::uint64_t max_stack_values = 1u << 24;    // values on the pickle VM stack
  std::uint64_t max_marks = 1u << 20;           // open MARKs (nesting)
  std::uint64_t max_memo_entries = 1u << 28;    // memo table size
  std::uint64_t max_memo_gap = 1u << 20;        // BINPUT index beyond the memo's end
  std::uint64_t max_string_bytes = 1ull << 28;  // one string / bytes object (a frame's file name is < 4 KiB)
  std::uint64_t max_container_items = 1ull << 28;
  // The reader's total memory (buffers, stack, memo, live containers and the model built so
  // far) may not exceed memory_floor_bytes + memory_per_pickle_byte x the pickle bytes read so
  // far (decompressed): a real snapshot needs about 1-2 bytes per pickle byte.
  std::uint64_t memory_floor_bytes = 512ull << 20;
  std::uint64_t memory_per_pickle_byte = 4;
  // And never more than this, however large the pickle: a small compressed file can decompress to
  // gigabytes of pickle that only fill the memo (a memo flood), which the budget above would allow.
  std::uint64_t memory_cap_bytes = defaultReadMemoryCap();
};

struct ReadOptions {
  ReadLimits limits;
  // Called now and then with (bytes of the stored file consumed, total bytes of the file).
  std::function<void(std::uint64_t done, std::uint64_t total)> progress;
  // Set from another thread to stop the read; it then fails with "cancelled".
  const std::atomic<bool>* cancel = nullptr;
};

// Reads the snapshot stored in `path`.
Expected<Snapshot> readSnapshotFile(const std::string& path, const ReadOptions& options = {});

// Reads a snapshot held in memory; `name` is used in error messages.
Expected<Snapshot> readSnapshotBytes(std::span<const std::uint8_t> bytes, const std::string& name,
                                     const ReadOptions& options = {});

}  // namespace reservoir::traces
