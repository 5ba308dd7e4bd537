// Pickle emission for the snapshot writer, with the choices Python's pickler makes: minimal
// integer opcodes, SHORT_BINUNICODE from protocol 4, 64 KiB FRAMEs committed at object
// boundaries (protocols 4-5), MEMOIZE (4-5) or BINPUT / LONG_BINPUT (2-3). Bytes go to a
// ByteSink as frames complete; the first error sticks and is returned by end().
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "reservoir/core/status.h"
#include "writer_sink.h"

namespace reservoir::traces::detail {

class Pickler {
 public:
  static constexpr std::size_t kFrameTarget = 64 * 1024;  // Python's _FRAME_SIZE_TARGET
  static constexpr std::size_t kBatchSize = 1000;         // Python's _BATCHSIZE

  Pickler(ByteSink* sink, int protocol);  // writes PROTO
  Status end();                           // STOP, last frame, flush, sink->finish()

  // Call before each object (Python's commit_frame() at the start of save()).
  void boundary();
  // A write has failed (the sink's error, e.g. a cancel): what follows is never written.
  [[nodiscard]] bool failed() const { return !error_.ok(); }

  void none() { op(0x4e); }
  void boolean(bool b);
  void integer(std::int64_t v);
  void uinteger(std::uint64_t v);
  void real(double v);
  // A str; each distinct text is written once, then fetched from the memo.
  void str(std::string_view text);

  void emptyDict() { op(0x7d); }
  void emptyList() { op(0x5d); }
  void mark() { op(0x28); }
  void tuple2() { op(0x86); }
  // Ends a batch of `n` items started (for n > 1) with mark(): SETITEMS / SETITEM.
  void endDictBatch(std::size_t n) { op(n > 1 ? 0x75 : 0x73); }
  // APPENDS / APPEND.
  void endListBatch(std::size_t n) { op(n > 1 ? 0x65 : 0x61); }

  // Stores the top of the stack in the next memo slot and returns that slot.
  std::uint32_t memoize();
  void get(std::uint32_t slot);

 private:
  void op(std::uint8_t code) { put({&code, 1}); }
  void put(std::span<const std::uint8_t> bytes);
  void putLE(std::uint8_t code, std::uint64_t value, std::size_t width);
  void putLong1(std::span<const std::uint8_t> le);
  void commitFrame();
  void flush();
  void writeStrPayload(std::string_view text);
  void setError(Status st);

  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };

  ByteSink* sink_;
  int protocol_;
  bool framing_;
  std::vector<std::uint8_t> buf_;
  std::size_t frame_start_;  // index in buf_ of the open frame's header, or kNoFrame
  std::uint32_t next_memo_ = 0;
  std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>> str_memo_;
  Status error_;
};

}  // namespace reservoir::traces::detail
