// Destinations of the snapshot writer's bytes: memory, a file, or a gzip / zstd compressor
// in front of either.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "reservoir/core/status.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::traces::detail {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual Status write(std::span<const std::uint8_t> bytes) = 0;
  // Flushes everything (compressor trailers included); no write may follow.
  virtual Status finish() = 0;
};

class VectorSink final : public ByteSink {
 public:
  explicit VectorSink(std::vector<std::uint8_t>* out) : out_(out) {}
  Status write(std::span<const std::uint8_t> bytes) override {
    out_->insert(out_->end(), bytes.begin(), bytes.end());
    return {};
  }
  Status finish() override { return {}; }

 private:
  std::vector<std::uint8_t>* out_;
};

// Creates `path` (truncating it); errors name the path.
Expected<std::unique_ptr<ByteSink>> fileSink(const std::string& path);

// Writes `path` with what `fill` puts into the sink it is given (and finishes). A regular file
// (or a new one) is written as `path`.tmp (created new: an existing .tmp is an error, neither
// followed nor overwritten) and renamed into place, so a failed or interrupted write leaves the
// old file (and no .tmp) behind; a device, pipe, socket or symbolic link is written in place,
// never replaced; a directory is refused. Every write and the close are checked; errors name
// the path. While it is written, the .tmp is listed for removeTemporaryFilesNow().
Status writeFileVia(const std::string& path, const std::function<Status(ByteSink*)>& fill);

// A sink that compresses into `inner` (which must outlive it), or nullptr for kNone.
// `level` 0 = the library's default.
std::unique_ptr<ByteSink> compressingSink(ByteSink* inner, Compression compression, int level);

}  // namespace reservoir::traces::detail
