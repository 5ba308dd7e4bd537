#include "reservoir/traces/reader.h"

#include <atomic>

#include "byte_source.h"
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
std::atomic<std::uint64_t> g_read_memory_cap{kDefaultReadMemoryCap};
}  // namespace

std::uint64_t defaultReadMemoryCap() { return g_read_memory_cap.load(std::memory_order_relaxed); }
void setDefaultReadMemoryCap(std::uint64_t bytes) { g_read_memory_cap.store(bytes, std::memory_order_relaxed); }

Expected<Snapshot> readSnapshotFile(const std::string& path, const ReadOptions& options) {
  auto raw = detail::openFileSource(path);
  if (!raw) return formatReadError(raw.status(), ReadPlace{path, std::nullopt, false, std::nullopt});
  return readFrom(std::move(*raw), path, options);
}

Expected<Snapshot> readSnapshotBytes(std::span<const std::uint8_t> bytes, const std::string& name,
                                     const ReadOptions& options) {
  return readFrom(detail::memorySource(bytes), name, options);
}

}  // namespace reservoir::traces
