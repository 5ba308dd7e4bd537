// Sources of pickle bytes: a file, memory, or a gzip / zstd decompressor over either.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "reservoir/core/status.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::traces::detail {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to dst.size() bytes; 0 means the end of the data.
  virtual Expected<std::size_t> read(std::span<std::uint8_t> dst) = 0;
  // Bytes of the stored (possibly compressed) input consumed so far.
  [[nodiscard]] virtual std::uint64_t storedConsumed() const = 0;
  // Called when the reader needs no more bytes: a decompressor reads its input to the end, so a
  // damaged or cut trailer (gzip CRC32 and length, zstd checksum) is an error, with the offset
  // in the decompressed stream where it shows. Plain sources have nothing to check.
  virtual Status finish() { return {}; }
  // Bytes handed out by read() so far.
  [[nodiscard]] std::uint64_t produced() const { return produced_; }

 protected:
  std::uint64_t produced_ = 0;
};

// A raw source (file or memory) that also lets the first bytes be looked at.
class RawSource : public ByteSource {
 public:
  [[nodiscard]] virtual std::uint64_t storedSize() const = 0;
  // Up to 4 leading bytes, without consuming them.
  [[nodiscard]] virtual std::span<const std::uint8_t> peekMagic() = 0;
};

Expected<std::unique_ptr<RawSource>> openFileSource(const std::string& path);
std::unique_ptr<RawSource> memorySource(std::span<const std::uint8_t> bytes);

Compression detectCompression(std::span<const std::uint8_t> magic);
// Wraps `raw` in the decompressor `compression` needs (or returns it as is).
std::unique_ptr<ByteSource> decompressing(std::unique_ptr<RawSource> raw, Compression compression);

}  // namespace reservoir::traces::detail
