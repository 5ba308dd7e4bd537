#include "byte_source.h"

#include "reservoir/traces/read_problem.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace reservoir::traces::detail {
namespace {

constexpr std::size_t kChunk = 1u << 20;

class FileSource final : public RawSource {
 public:
  FileSource(int fd, std::uint64_t size) : fd_(fd), size_(size) {}
  ~FileSource() override { ::close(fd_); }
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  Expected<std::size_t> read(std::span<std::uint8_t> dst) override {
    std::size_t done = 0;
    if (peeked_used_ < peeked_len_) {
      const std::size_t n = std::min(dst.size(), peeked_len_ - peeked_used_);
      std::memcpy(dst.data(), peeked_ + peeked_used_, n);
      peeked_used_ += n;
      done = n;
    }
    while (done < dst.size()) {
      const ssize_t got = ::read(fd_, dst.data() + done, dst.size() - done);
      if (got < 0) {
        if (errno == EINTR) continue;
        return readError(ReadProblem::kUnreadable, std::string("read failed: ") + std::strerror(errno),
                         std::strerror(errno));
      }
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
      consumed_ += static_cast<std::uint64_t>(got);
    }
    return done;
  }
  [[nodiscard]] std::uint64_t storedConsumed() const override { return consumed_; }
  [[nodiscard]] std::uint64_t storedSize() const override { return size_; }
  std::span<const std::uint8_t> peekMagic() override {
    if (!peek_done_) {
      peek_done_ = true;
      while (peeked_len_ < sizeof(peeked_)) {
        const ssize_t got = ::read(fd_, peeked_ + peeked_len_, sizeof(peeked_) - peeked_len_);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        peeked_len_ += static_cast<std::size_t>(got);
        consumed_ += static_cast<std::uint64_t>(got);
      }
    }
    return {peeked_, peeked_len_};
  }

 private:
  int fd_;
  std::uint64_t size_;
  std::uint64_t consumed_ = 0;
  std::uint8_t peeked_[4] = {};
  std::size_t peeked_len_ = 0;
  std::size_t peeked_used_ = 0;
  bool peek_done_ = false;
};

class MemorySource final : public RawSource {
 public:
  explicit MemorySource(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  Expected<std::size_t> read(std::span<std::uint8_t> dst) override {
    const std::size_t n = std::min(dst.size(), bytes_.size() - pos_);
    if (n > 0) std::memcpy(dst.data(), bytes_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  [[nodiscard]] std::uint64_t storedConsumed() const override { return pos_; }
  [[nodiscard]] std::uint64_t storedSize() const override { return bytes_.size(); }
  std::span<const std::uint8_t> peekMagic() override { return bytes_.first(std::min<std::size_t>(4, bytes_.size())); }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t pos_ = 0;
};

// Hands out the bytes decoded before an error first, so the error is reported at the offset
// where the good data ends; the error comes with the next read.
Expected<std::size_t> failAfter(std::size_t produced, Status error, Status* pending) {
  if (produced == 0) return error;
  *pending = std::move(error);
  return produced;
}

// The compressed stream stops before its end: the file was cut.
Status endsEarly(std::string_view codec) {
  return readError(ReadProblem::kTruncated, std::string(codec) + ": compressed data ends early (truncated file)");
}

// Reads `source` to its end, so its checks at the end of the data run; an error names the
// offset in the decompressed stream where it shows.
Status drain(ByteSource& source) {
  std::vector<std::uint8_t> scratch(kChunk);
  for (;;) {
    const std::uint64_t at = source.produced();
    auto got = source.read(scratch);
    if (!got) return got.status().at({}, at);
    if (*got == 0) return {};
  }
}

// zlib's and zstd's names for a failed integrity check, in plain words; `where` says at which
// byte of the compressed file.
Status plainCodecError(std::string_view codec, std::string_view what, const std::string& where) {
  const std::string c(codec);
  if (what == "incorrect data check")
    return readError(ReadProblem::kCompressedDamaged,
                     c + ": corrupt data: the CRC32 in the trailer does not match the data" + where,
                     "its " + c + " CRC32 does not match the data (changed or damaged after it was written)");
  if (what == "incorrect length check")
    return readError(ReadProblem::kCompressedDamaged,
                     c + ": corrupt data: the length in the trailer does not match the data" + where,
                     "its " + c + " trailer gives another length than the data has");
  if (what.find("checksum") != std::string_view::npos)
    return readError(ReadProblem::kCompressedDamaged,
                     c + ": corrupt data: the checksum does not match the data" + where,
                     "its " + c + " checksum does not match the data (changed or damaged after it was written)");
  return readError(ReadProblem::kCompressedDamaged, c + ": corrupt data (" + std::string(what) + ")" + where,
                   "the " + c + " data does not decode");
}

// A decompressor over a raw source: counts what it hands out, reports the compressed bytes
// read, and at the end drains the stream so that the codec's integrity checks run.
class DecompressingSource : public ByteSource {
 public:
  explicit DecompressingSource(std::unique_ptr<RawSource> inner, std::size_t chunk)
      : inner_(std::move(inner)), in_(chunk) {}
  Expected<std::size_t> read(std::span<std::uint8_t> dst) final {
    auto n = decode(dst);
    if (n) produced_ += *n;
    return n;
  }
  [[nodiscard]] std::uint64_t storedConsumed() const final { return inner_->storedConsumed(); }
  Status finish() final { return drain(*this); }

 protected:
  virtual Expected<std::size_t> decode(std::span<std::uint8_t> dst) = 0;
  std::unique_ptr<RawSource> inner_;
  std::vector<std::uint8_t> in_;
  Status pending_error_;
};

class GzipSource final : public DecompressingSource {
 public:
  explicit GzipSource(std::unique_ptr<RawSource> inner) : DecompressingSource(std::move(inner), kChunk) {
    std::memset(&zs_, 0, sizeof(zs_));
    ok_ = inflateInit2(&zs_, 15 + 32) == Z_OK;  // 15 window bits, +32: gzip or zlib header
  }
  ~GzipSource() override { inflateEnd(&zs_); }
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;

 private:
  Expected<std::size_t> decode(std::span<std::uint8_t> dst) override {
    if (!ok_) return Status::error("gzip: cannot initialise zlib");
    if (!pending_error_.ok()) return pending_error_;
    const auto want = static_cast<uInt>(std::min<std::size_t>(dst.size(), 1u << 30));
    zs_.next_out = dst.data();
    zs_.avail_out = want;
    while (zs_.avail_out > 0 && !finished_) {
      if (zs_.avail_in == 0) {
        auto got = inner_->read(in_);
        if (!got) return failAfter(want - zs_.avail_out, got.status(), &pending_error_);
        if (*got == 0) {
          if (member_started_) return failAfter(want - zs_.avail_out, endsEarly("gzip"), &pending_error_);
          finished_ = true;
          break;
        }
        zs_.next_in = in_.data();
        zs_.avail_in = static_cast<uInt>(*got);
      }
      member_started_ = true;
      const int rc = inflate(&zs_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        member_started_ = false;
        inflateReset(&zs_);  // a following gzip member continues the stream
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return failAfter(want - zs_.avail_out, corruptAt(zs_.msg ? zs_.msg : "inflate error"), &pending_error_);
      }
    }
    return want - zs_.avail_out;
  }
  Status corruptAt(std::string_view what) const {
    return plainCodecError(
        "gzip", what,
        " (at byte " + std::to_string(inner_->storedConsumed() - zs_.avail_in) + " of the compressed file)");
  }

 private:
  z_stream zs_;
  bool ok_ = false;
  bool finished_ = false;
  bool member_started_ = false;
};

class ZstdSource final : public DecompressingSource {
 public:
  explicit ZstdSource(std::unique_ptr<RawSource> inner)
      : DecompressingSource(std::move(inner), ZSTD_DStreamInSize()), ds_(ZSTD_createDStream()) {
    if (ds_) ZSTD_initDStream(ds_);
  }
  ~ZstdSource() override { ZSTD_freeDStream(ds_); }
  ZstdSource(const ZstdSource&) = delete;
  ZstdSource& operator=(const ZstdSource&) = delete;

 private:
  Expected<std::size_t> decode(std::span<std::uint8_t> dst) override {
    if (!ds_) return Status::error("zstd: cannot create a decompression stream");
    if (!pending_error_.ok()) return pending_error_;
    ZSTD_outBuffer out{dst.data(), dst.size(), 0};
    while (out.pos < out.size) {
      if (input_.pos == input_.size) {
        if (eof_) break;
        auto got = inner_->read(in_);
        if (!got) return failAfter(out.pos, got.status(), &pending_error_);
        if (*got == 0) {
          eof_ = true;
          if (last_hint_ != 0) return failAfter(out.pos, endsEarly("zstd"), &pending_error_);
          break;
        }
        input_ = ZSTD_inBuffer{in_.data(), *got, 0};
      }
      // At most the input zstd asks for (`hint`: the rest of one block, or the checksum): a
      // failing call reports no progress, so a block's output and the check after it come
      // from separate calls, and an error names where the good data ends.
      ZSTD_inBuffer step{input_.src, std::min(input_.size, input_.pos + std::max<std::size_t>(next_in_, 1)),
                         input_.pos};
      const std::size_t hint = ZSTD_decompressStream(ds_, &out, &step);
      input_.pos = step.pos;
      next_in_ = ZSTD_isError(hint) || hint == 0 ? kFrameStart : hint;
      if (ZSTD_isError(hint)) {
        const std::uint64_t at = inner_->storedConsumed() - (input_.size - input_.pos);
        return failAfter(out.pos,
                         plainCodecError("zstd", ZSTD_getErrorName(hint),
                                         " (at byte " + std::to_string(at) + " of the compressed file)"),
                         &pending_error_);
      }
      last_hint_ = hint;
    }
    return out.pos;
  }

 private:
  ZSTD_DStream* ds_;
  ZSTD_inBuffer input_{nullptr, 0, 0};
  static constexpr std::size_t kFrameStart = 6;  // enough of a frame header for zstd to ask for the rest
  std::size_t last_hint_ = 0;
  std::size_t next_in_ = kFrameStart;
  bool eof_ = false;
};

}  // namespace

Expected<std::unique_ptr<RawSource>> openFileSource(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return readError(ReadProblem::kUnreadable, std::string("cannot open: ") + std::strerror(errno),
                     std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return readError(ReadProblem::kUnreadable, std::string("cannot stat: ") + std::strerror(err), std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return readError(ReadProblem::kUnreadable, "is a directory, expected a snapshot file", "it is a directory");
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return std::unique_ptr<RawSource>(new FileSource(fd, static_cast<std::uint64_t>(st.st_size)));
}

std::unique_ptr<RawSource> memorySource(std::span<const std::uint8_t> bytes) {
  return std::make_unique<MemorySource>(bytes);
}

Compression detectCompression(std::span<const std::uint8_t> magic) {
  if (magic.size() >= 2 && magic[0] == 0x1f && magic[1] == 0x8b) return Compression::kGzip;
  if (magic.size() >= 4 && magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd)
    return Compression::kZstd;
  return Compression::kNone;
}

std::unique_ptr<ByteSource> decompressing(std::unique_ptr<RawSource> raw, Compression compression) {
  switch (compression) {
    case Compression::kGzip: return std::make_unique<GzipSource>(std::move(raw));
    case Compression::kZstd: return std::make_unique<ZstdSource>(std::move(raw));
    case Compression::kNone: break;
  }
  return raw;
}

}  // namespace reservoir::traces::detail
