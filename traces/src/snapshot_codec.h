// A snapshot as the bytes of a cache file, and back (the snapshot cache, snapshot_cache.h): the
// model a read made, field by field, its large columns as they lie in memory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reservoir/traces/snapshot.h"

namespace reservoir::traces::detail {

// A 64-bit digest of a byte stream, however it is cut into pieces (four lanes of 8-byte words,
// multiplied and shifted): it finds a damaged cache entry, at memory speed. It is taken over
// the file's bytes as they are written and read, in large pieces.
class StreamDigest {
 public:
  void update(const std::uint8_t* p, std::size_t n);
  [[nodiscard]] std::uint64_t value() const;

 private:
  void word(std::uint64_t w);
  std::uint64_t lanes_[4] = {0x9E3779B97F4A7C15ull, 0xC2B2AE3D27D4EB4Full, 0x165667B19E3779F9ull,
                             0x27D4EB2F165667C5ull};
  std::uint64_t words_ = 0;
  std::uint64_t pending_ = 0;  // bytes of an unfinished word, from its low end
  unsigned pending_n_ = 0;
};

// Buffered writes to a file descriptor; a failed write makes finish() false.
class CacheOut {
 public:
  explicit CacheOut(int fd) : fd_(fd) { buf_.reserve(kBuffer); }
  void u64(std::uint64_t v) { bytes(&v, sizeof v); }
  void str(std::string_view s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
  void bytes(const void* data, std::size_t n);
  // Writes the digest of everything before it and flushes: false if any write failed.
  [[nodiscard]] bool finish();

 private:
  static constexpr std::size_t kBuffer = 1u << 20;
  void flush();
  void writeAll(const std::uint8_t* p, std::size_t n);
  int fd_;
  std::vector<std::uint8_t> buf_;
  StreamDigest digest_;
  bool ok_ = true;
};

// Buffered reads of `size` bytes from a file descriptor; past the end or after a failed read
// every value is 0 and ok() false.
class CacheIn {
 public:
  CacheIn(int fd, std::uint64_t size) : fd_(fd), size_(size), left_(size) {}
  std::uint64_t u64() {
    std::uint64_t v = 0;
    bytes(&v, sizeof v);
    return v;
  }
  std::string str();
  void bytes(void* data, std::size_t n);
  // Whether `count` items of `each` bytes can still be in the file (a length read from it is
  // checked before anything that size is made).
  [[nodiscard]] bool fits(std::uint64_t count, std::uint64_t each) const {
    return ok_ && count <= (left_ + (end_ - at_)) / each;
  }
  [[nodiscard]] bool ok() const { return ok_; }
  // Reads the digest CacheOut::finish wrote: true when it is the digest of what was read, and
  // the file ends there.
  [[nodiscard]] bool finish();

 private:
  static constexpr std::size_t kBuffer = 1u << 20;
  bool fill();
  // Adds the bytes just read to the digest, but for the file's last 8 (the digest itself).
  void digestRead(const std::uint8_t* p, std::size_t got);
  int fd_;
  std::uint64_t size_;
  std::uint64_t left_;      // not yet read from the file
  std::uint64_t read_ = 0;  // read from the file
  std::vector<std::uint8_t> buf_;
  std::size_t at_ = 0, end_ = 0;
  StreamDigest digest_;
  bool ok_ = true;
};

void saveSnapshot(CacheOut& out, const Snapshot& snap);
// nullopt where the bytes do not make a snapshot this version writes (ids out of range, lengths
// past the file's end).
std::optional<Snapshot> loadSnapshot(CacheIn& in);

}  // namespace reservoir::traces::detail
