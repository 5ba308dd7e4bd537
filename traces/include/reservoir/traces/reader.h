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
#include <optional>
#include <span>
#include <string>

#include "reservoir/core/status.h"
#include "reservoir/traces/snapshot.h"
#include "reservoir/traces/snapshot_cache.h"

namespace reservoir::traces {

// The reader's memory cap (ReadLimits::memory_cap_bytes) for every read that does not set its own:
// unset (the default) follows the input (memoryCapFor); a number is a fixed cap, 0 none. Front
// ends set it from RESERVOIR_MAX_MEMORY (replay::applyMemoryCapFromEnvironment).
std::optional<std::uint64_t> defaultReadMemoryCap();
void setDefaultReadMemoryCap(std::optional<std::uint64_t> bytes);

struct ReadLimits {
  std::uint64_t max_stack_values = 1u << 24;    // values on the pickle VM stack
  std::uint64_t max_marks = 1u << 20;           // open MARKs (nesting)
  std::uint64_t max_memo_entries = 1u << 28;    // memo table size
  std::uint64_t max_memo_gap = 1u << 20;        // BINPUT index beyond the memo's end
  std::uint64_t max_string_bytes = 1ull << 28;  // one string / bytes object (a frame's file name is < 4 KiB)
  std::uint64_t max_container_items = 1ull << 28;
  // Distinct combinations of an entry's stream, pool_id, forward_frames, compile_context and
  // user_metadata (EventExtra): at most kMaxEventExtras, as an entry keeps its id in 24 bits.
  std::uint64_t max_event_extras = kMaxEventExtras;
  // The reader's total memory (buffers, stack, memo, live containers and the model built so
  // far) may not exceed memory_floor_bytes + memory_per_pickle_byte x the pickle bytes read so
  // far (decompressed): a real snapshot needs about 1-2 bytes per pickle byte.
  std::uint64_t memory_floor_bytes = 512ull << 20;
  std::uint64_t memory_per_pickle_byte = 4;
  // And never more than a cap, however long the pickle runs: a small compressed file can decompress
  // to gigabytes of pickle that only fill the memo (a memo flood), which the budget above would
  // allow. A fixed number of bytes (0: none), or unset: the cap follows the input, so that a
  // well-formed snapshot of any size opens with no setting (memoryCapFor).
  std::optional<std::uint64_t> memory_cap_bytes = defaultReadMemoryCap();
  // The cap that follows the input: memory_cap_floor_bytes + per stored byte of the file (as
  // stored: compressed or not) memory_cap_per_plain_byte, or memory_cap_per_compressed_byte for
  // gzip / zstd. Real snapshots need 1-2 bytes per pickle byte and compress 12-16 times (a
  // training trace: 680 KB, 56 KB gzip, 44 KB zstd), so they need at most about 25 bytes per
  // compressed byte; a decompression bomb (a 123 KB .zst of 4 GB) meets the cap within its
  // first GiB.
  std::uint64_t memory_cap_floor_bytes = 1ull << 30;
  std::uint64_t memory_cap_per_plain_byte = 4;
  std::uint64_t memory_cap_per_compressed_byte = 64;
};

// The cap one read of a file of `stored_bytes` (compressed or not) works under: memory_cap_bytes
// when set (0: none, returned as 0), else the one that follows the input.
std::uint64_t memoryCapFor(const ReadLimits& limits, std::uint64_t stored_bytes, bool compressed);

struct ReadOptions {
  ReadLimits limits;
  // Called now and then with (bytes of the stored file consumed, total bytes of the file).
  std::function<void(std::uint64_t done, std::uint64_t total)> progress;
  // Set from another thread to stop the read; it then fails with "cancelled".
  const std::atomic<bool>* cancel = nullptr;
  // Where a file's read is kept for the next one (snapshot_cache.h); none: every read parses.
  std::optional<SnapshotCache> cache = defaultSnapshotCache();
};

// Reads the snapshot stored in `path`.
Expected<Snapshot> readSnapshotFile(const std::string& path, const ReadOptions& options = {});

// Reads a snapshot held in memory; `name` is used in error messages.
Expected<Snapshot> readSnapshotBytes(std::span<const std::uint8_t> bytes, const std::string& name,
                                     const ReadOptions& options = {});

}  // namespace reservoir::traces
