#include "reservoir/traces/reader.h"

#include "byte_source.h"
#include "pickle_machine.h"
#include "snapshot_validate.h"

namespace reservoir::traces {
namespace {

Expected<Snapshot> readFrom(std::unique_ptr<detail::RawSource> raw, const std::string& name,
                            const ReadOptions& options) {
  const std::uint64_t stored = raw->storedSize();
  const Compression compression = detail::detectCompression(raw->peekMagic());
  auto source = detail::decompressing(std::move(raw), compression);
  detail::PickleMachine machine(*source, stored, compression != Compression::kNone, options);
  auto snap = machine.run();
  const char* what = compression == Compression::kNone ? "" : " (decompressed stream)";
  if (!snap) return Status::error(name + ": " + snap.message() + what);
  // Read the input to its end: a compressed file's trailer (CRC, length, checksum) is checked.
  if (Status st = source->finish(); !st.ok()) return Status::error(name + ": " + st.message() + what);
  if (Status st = detail::validateSnapshot(*snap); !st.ok()) return Status::error(name + ": " + st.message());
  snap->compression = compression;
  snap->file_bytes = stored;
  if (options.progress) options.progress(stored, stored);
  return snap;
}

}  // namespace

Expected<Snapshot> readSnapshotFile(const std::string& path, const ReadOptions& options) {
  auto raw = detail::openFileSource(path);
  if (!raw) return Status::error(path + ": " + raw.message());
  return readFrom(std::move(*raw), path, options);
}

Expected<Snapshot> readSnapshotBytes(std::span<const std::uint8_t> bytes, const std::string& name,
                                     const ReadOptions& options) {
  return readFrom(detail::memorySource(bytes), name, options);
}

}  // namespace reservoir::traces
