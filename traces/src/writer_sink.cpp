#include "writer_sink.h"

#include "temp_files.h"

#include <zlib.h>
#include <zstd.h>

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>

namespace reservoir::traces::detail {
namespace {

constexpr std::size_t kOutChunk = 1u << 16;

class FileSink final : public ByteSink {
 public:
  FileSink(std::FILE* file, std::string path) : file_(file), path_(std::move(path)) {}
  ~FileSink() override {
    if (file_) std::fclose(file_);
  }
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;

  Status write(std::span<const std::uint8_t> bytes) override {
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size())
      return Status::error(path_ + ": write failed: " + std::strerror(errno));
    return {};
  }
  Status finish() override {
    std::FILE* f = file_;
    file_ = nullptr;
    if (std::fflush(f) != 0 || std::ferror(f)) {
      const int err = errno;
      std::fclose(f);
      return Status::error(path_ + ": write failed: " + std::strerror(err));
    }
    if (std::fclose(f) != 0) return Status::error(path_ + ": close failed: " + std::strerror(errno));
    return {};
  }

 private:
  std::FILE* file_;
  std::string path_;
};

class GzipSink final : public ByteSink {
 public:
  GzipSink(ByteSink* inner, int level) : inner_(inner), out_(kOutChunk) {
    std::memset(&zs_, 0, sizeof(zs_));
    // 15 window bits + 16: a gzip header (mtime 0), as `gzip -n` writes.
    ok_ = deflateInit2(&zs_, level == 0 ? Z_DEFAULT_COMPRESSION : level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) ==
          Z_OK;
  }
  ~GzipSink() override { deflateEnd(&zs_); }
  GzipSink(const GzipSink&) = delete;
  GzipSink& operator=(const GzipSink&) = delete;

  Status write(std::span<const std::uint8_t> bytes) override { return pump(bytes, Z_NO_FLUSH); }
  Status finish() override {
    if (Status st = pump({}, Z_FINISH); !st.ok()) return st;
    return inner_->finish();
  }

 private:
  Status pump(std::span<const std::uint8_t> bytes, int flush) {
    if (!ok_) return Status::error("gzip: cannot initialise zlib");
    zs_.next_in = const_cast<Bytef*>(bytes.data());  // zlib's API is not const-correct
    zs_.avail_in = static_cast<uInt>(bytes.size());
    for (;;) {
      zs_.next_out = out_.data();
      zs_.avail_out = static_cast<uInt>(out_.size());
      const int rc = deflate(&zs_, flush);
      if (rc == Z_STREAM_ERROR) return Status::error("gzip: deflate failed");
      const std::size_t produced = out_.size() - zs_.avail_out;
      if (Status st = inner_->write({out_.data(), produced}); !st.ok()) return st;
      if (flush == Z_FINISH ? rc == Z_STREAM_END : (zs_.avail_in == 0 && zs_.avail_out != 0)) return {};
    }
  }

  ByteSink* inner_;
  std::vector<std::uint8_t> out_;
  z_stream zs_;
  bool ok_ = false;
};

class ZstdSink final : public ByteSink {
 public:
  ZstdSink(ByteSink* inner, int level) : inner_(inner), out_(ZSTD_CStreamOutSize()), cs_(ZSTD_createCCtx()) {
    if (cs_ && level != 0) ZSTD_CCtx_setParameter(cs_, ZSTD_c_compressionLevel, level);
  }
  ~ZstdSink() override { ZSTD_freeCCtx(cs_); }
  ZstdSink(const ZstdSink&) = delete;
  ZstdSink& operator=(const ZstdSink&) = delete;

  Status write(std::span<const std::uint8_t> bytes) override { return pump(bytes, ZSTD_e_continue); }
  Status finish() override {
    if (Status st = pump({}, ZSTD_e_end); !st.ok()) return st;
    return inner_->finish();
  }

 private:
  Status pump(std::span<const std::uint8_t> bytes, ZSTD_EndDirective mode) {
    if (!cs_) return Status::error("zstd: cannot create a compression context");
    ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
    for (;;) {
      ZSTD_outBuffer out{out_.data(), out_.size(), 0};
      const std::size_t left = ZSTD_compressStream2(cs_, &out, &in, mode);
      if (ZSTD_isError(left)) return Status::error(std::string("zstd: ") + ZSTD_getErrorName(left));
      if (Status st = inner_->write({out_.data(), out.pos}); !st.ok()) return st;
      if (mode == ZSTD_e_end ? left == 0 : in.pos == in.size) return {};
    }
  }

  ByteSink* inner_;
  std::vector<std::uint8_t> out_;
  ZSTD_CCtx* cs_;
};

}  // namespace

Expected<std::unique_ptr<ByteSink>> fileSink(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return Status::error(path + ": cannot create: " + std::strerror(errno));
  return std::unique_ptr<ByteSink>(std::make_unique<FileSink>(f, path));
}

namespace {

// A new file at `path`, never an existing one: a file or symbolic link already there (a
// temporary left by a killed run, or planted) is neither followed nor overwritten.
Expected<std::unique_ptr<ByteSink>> newFileSink(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0 && errno == EEXIST)
    return Status::error(path + " already exists (left by an interrupted run?): remove it, then write again");
  if (fd < 0) return Status::error(path + ": cannot create: " + std::strerror(errno));
  std::FILE* f = ::fdopen(fd, "wb");
  if (!f) {
    const int err = errno;
    ::close(fd);
    ::unlink(path.c_str());
    return Status::error(path + ": cannot open: " + std::strerror(err));
  }
  return std::unique_ptr<ByteSink>(std::make_unique<FileSink>(f, path));
}

// How `path` is written: replaced through a temporary file, or written in place.
enum class OutputTarget : std::uint8_t { kReplace, kInPlace };

Expected<OutputTarget> outputTarget(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return OutputTarget::kReplace;  // absent: created (open says why not)
  // A symbolic link is written through, in place: renaming over it would replace the link (say
  // /dev/stdout) with a regular file and leave what it points at unwritten.
  if (S_ISLNK(st.st_mode)) {
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      return Status::error(path + ": is a directory, expected a file to write");
    return OutputTarget::kInPlace;
  }
  if (S_ISDIR(st.st_mode)) return Status::error(path + ": is a directory, expected a file to write");
  return S_ISREG(st.st_mode) ? OutputTarget::kReplace : OutputTarget::kInPlace;
}

Status namingPath(const std::string& path, Status st) {
  if (st.ok() || st.message().rfind(path, 0) == 0) return st;
  return Status::error(path + ": " + st.message());
}

}  // namespace

Status writeFileVia(const std::string& path, const std::function<Status(ByteSink*)>& fill) {
  auto target = outputTarget(path);
  if (!target) return target.status();
  if (*target == OutputTarget::kInPlace) {  // a device or pipe: written to, never replaced
    auto sink = fileSink(path);
    if (!sink) return sink.status();
    Status st = fill(sink->get());
    sink->reset();  // closes the file if `fill` stopped early
    return namingPath(path, std::move(st));
  }
  const std::string tmp = path + ".tmp";
  // Signals wait while the temporary is created and listed: one that came in between would end
  // the process with the file made but not yet listed for removal.
  std::optional<TempListing> listed;
  auto sink = [&] {
    const SignalsHeld held;
    auto made = newFileSink(tmp);
    if (made) listed.emplace(tmp);
    return made;
  }();
  if (!sink) return namingPath(path, sink.status());
  Status st = fill(sink->get());
  sink->reset();
  if (st.ok() && std::rename(tmp.c_str(), path.c_str()) != 0)
    st = Status::error(path + ": cannot rename " + tmp + " into place: " + std::strerror(errno));
  if (!st.ok()) std::remove(tmp.c_str());
  return namingPath(path, std::move(st));
}

std::unique_ptr<ByteSink> compressingSink(ByteSink* inner, Compression compression, int level) {
  switch (compression) {
    case Compression::kGzip: return std::make_unique<GzipSink>(inner, level);
    case Compression::kZstd: return std::make_unique<ZstdSink>(inner, level);
    case Compression::kNone: break;
  }
  return nullptr;
}

}  // namespace reservoir::traces::detail
