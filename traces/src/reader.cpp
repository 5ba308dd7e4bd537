#include "reservoir/traces/reader.h"

#include <algorithm>
#include <atomic>

#include "byte_source.h"
#include "cache_entry.h"
#include "pickle_machine.h"
#include "reservoir/traces/read_problem.h"
#include "snapshot_validate.h"

namespace reservoir::traces {
namespace {

// The reader's one message: headline first, then file, byte offset and detail.
Status placed(const Status& error, const std::string& name, bool compressed, std::uint64_t stored) {
  ReadPlace place{name, std::nullopt, compressed, std::nullopt};
  if (error.hasByteOffset()) place.byte = error.byteOffset();
  // A cut plain file: "byte 2 of 9" says how much of the file there is.
  if (!compressed && place.byte && error.headline() == headline(ReadProblem::kTruncated)) place.of = stored;
  return formatReadError(error, place);
}

Expected<Snapshot> readFrom(std::unique_ptr<detail::RawSource> raw, const std::string& name,
                            const ReadOptions& options) {
  const std::uint64_t stored = raw->storedSize();
  const Compression compression = detail::detectCompression(raw->peekMagic());
  const bool compressed = compression != Compression::kNone;
  auto source = detail::decompressing(std::move(raw), compression);
  detail::PickleMachine machine(*source, stored, compressed, options);
  auto snap = machine.run();
  if (!snap) return placed(snap.status(), name, compressed, stored);
  // Read the input to its end: a compressed file's trailer (CRC, length, checksum) is checked.
  if (Status st = source->finish(); !st.ok()) return placed(st, name, compressed, stored);
  if (Status st = detail::validateSnapshot(*snap); !st.ok())
    return formatReadError(st, ReadPlace{name, std::nullopt, false, std::nullopt});
  detail::noteSegmentsOfNoDevice(*snap);
  snap->compression = compression;
  snap->file_bytes = stored;
  if (options.progress) options.progress(stored, stored);
  return snap;
}

}  // namespace

namespace {
// kFollowsInput: no cap set (the cap follows the input).
constexpr std::uint64_t kFollowsInput = ~std::uint64_t{0};
std::atomic<std::uint64_t> g_read_memory_cap{kFollowsInput};
}  // namespace

std::optional<std::uint64_t> defaultReadMemoryCap() {
  const std::uint64_t cap = g_read_memory_cap.load(std::memory_order_relaxed);
  if (cap == kFollowsInput) return std::nullopt;
  return cap;
}

void setDefaultReadMemoryCap(std::optional<std::uint64_t> bytes) {
  g_read_memory_cap.store(bytes ? std::min(*bytes, kFollowsInput - 1) : kFollowsInput, std::memory_order_relaxed);
}

std::uint64_t memoryCapFor(const ReadLimits& limits, std::uint64_t stored_bytes, bool compressed) {
  if (limits.memory_cap_bytes) return *limits.memory_cap_bytes;
  const std::uint64_t per_byte = compressed ? limits.memory_cap_per_compressed_byte : limits.memory_cap_per_plain_byte;
  // Saturating: a cap past what any machine holds is no cap, not a wrapped small one.
  const std::uint64_t room = ~std::uint64_t{0} - limits.memory_cap_floor_bytes;
  if (per_byte != 0 && stored_bytes > room / per_byte) return 0;
  const std::uint64_t cap = limits.memory_cap_floor_bytes + per_byte * stored_bytes;
  return cap == 0 ? 1 : cap;  // 0 would mean none
}

Expected<Snapshot> readSnapshotFile(const std::string& path, const ReadOptions& options) {
  const auto cached = detail::CacheEntry::forRead(path, options);
  // (Cancelled before it starts: the read below says so as it would.)
  if (cached && !(options.cancel && options.cancel->load()))
    if (auto snap = cached->load()) {
      if (options.progress) options.progress(snap->file_bytes, snap->file_bytes);
      return std::move(*snap);
    }
  auto raw = detail::openFileSource(path);
  if (!raw) return formatReadError(raw.status(), ReadPlace{path, std::nullopt, false, std::nullopt});
  auto snap = readFrom(std::move(*raw), path, options);
  if (snap && cached) cached->store(*snap);
  return snap;
}

Expected<Snapshot> readSnapshotBytes(std::span<const std::uint8_t> bytes, const std::string& name,
                                     const ReadOptions& options) {
  return readFrom(detail::memorySource(bytes), name, options);
}

}  // namespace reservoir::traces
