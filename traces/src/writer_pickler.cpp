#include "writer_pickler.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <limits>

namespace reservoir::traces::detail {
namespace {

constexpr std::size_t kNoFrame = std::numeric_limits<std::size_t>::max();
constexpr std::size_t kFrameHeader = 9;  // FRAME + 8-byte length
constexpr std::size_t kFrameMin = 4;     // Python's _FRAME_SIZE_MIN: smaller frames are not framed
constexpr std::uint8_t kProto = 0x80, kStop = 0x2e, kFrame = 0x95, kMemoize = 0x94, kBinPut = 0x71, kLongBinPut = 0x72,
                       kBinGet = 0x68, kLongBinGet = 0x6a, kNewTrue = 0x88, kNewFalse = 0x89, kBinInt1 = 0x4b,
                       kBinInt2 = 0x4d, kBinInt = 0x4a, kLong1 = 0x8a, kBinFloat = 0x47, kShortBinUnicode = 0x8c,
                       kBinUnicode = 0x58, kBinUnicode8 = 0x8d;

}  // namespace

Pickler::Pickler(ByteSink* sink, int protocol)
    : sink_(sink), protocol_(protocol), framing_(protocol >= 4), frame_start_(kNoFrame) {
  buf_.reserve(kFrameTarget + 4096);
  const std::uint8_t header[2] = {kProto, static_cast<std::uint8_t>(protocol)};
  buf_.insert(buf_.end(), header, header + 2);  // PROTO precedes the first frame
}

void Pickler::setError(Status st) {
  if (error_.ok() && !st.ok()) error_ = std::move(st);
}

void Pickler::put(std::span<const std::uint8_t> bytes) {
  if (framing_ && frame_start_ == kNoFrame) {
    frame_start_ = buf_.size();
    buf_.resize(buf_.size() + kFrameHeader);
  }
  buf_.insert(buf_.end(), bytes.begin(), bytes.end());
}

void Pickler::putLE(std::uint8_t code, std::uint64_t value, std::size_t width) {
  std::uint8_t tmp[9] = {code};
  for (std::size_t i = 0; i < width; ++i) tmp[1 + i] = static_cast<std::uint8_t>(value >> (8 * i));
  put({tmp, 1 + width});
}

void Pickler::commitFrame() {
  if (frame_start_ == kNoFrame) return;
  const std::size_t len = buf_.size() - frame_start_ - kFrameHeader;
  if (len >= kFrameMin) {
    buf_[frame_start_] = kFrame;
    for (std::size_t i = 0; i < 8; ++i) buf_[frame_start_ + 1 + i] = static_cast<std::uint8_t>(len >> (8 * i));
  } else {
    buf_.erase(buf_.begin() + static_cast<std::ptrdiff_t>(frame_start_),
               buf_.begin() + static_cast<std::ptrdiff_t>(frame_start_ + kFrameHeader));
  }
  frame_start_ = kNoFrame;
}

void Pickler::flush() {
  if (buf_.empty()) return;
  setError(sink_->write(buf_));
  buf_.clear();
}

void Pickler::boundary() {
  if (framing_) {
    if (frame_start_ != kNoFrame && buf_.size() - frame_start_ - kFrameHeader >= kFrameTarget) {
      commitFrame();
      flush();
    }
  } else if (buf_.size() >= kFrameTarget) {
    flush();
  }
}

Status Pickler::end() {
  op(kStop);
  commitFrame();
  flush();
  if (error_.ok()) setError(sink_->finish());
  return error_;
}

void Pickler::boolean(bool b) { op(b ? kNewTrue : kNewFalse); }

void Pickler::integer(std::int64_t v) {
  if (v >= 0 && v <= 0xff) return putLE(kBinInt1, static_cast<std::uint64_t>(v), 1);
  if (v >= 0 && v <= 0xffff) return putLE(kBinInt2, static_cast<std::uint64_t>(v), 2);
  if (v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max())
    return putLE(kBinInt, static_cast<std::uint64_t>(v), 4);
  // LONG1 with the fewest little-endian two's-complement bytes (Python's encode_long).
  const auto u = static_cast<std::uint64_t>(v);
  std::size_t n = 8;
  while (n > 1) {
    const int shift = static_cast<int>(8 * (n - 1)) - 1;  // the sign bit of an (n-1)-byte value
    const std::int64_t rest = v >> shift;
    if (rest != 0 && rest != -1) break;
    --n;
  }
  std::uint8_t le[8];
  for (std::size_t i = 0; i < n; ++i) le[i] = static_cast<std::uint8_t>(u >> (8 * i));
  putLong1({le, n});
}

void Pickler::uinteger(std::uint64_t v) {
  if (v <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    return integer(static_cast<std::int64_t>(v));
  std::uint8_t le[9] = {};  // 8 value bytes and a zero sign byte
  for (std::size_t i = 0; i < 8; ++i) le[i] = static_cast<std::uint8_t>(v >> (8 * i));
  putLong1({le, 9});
}

void Pickler::putLong1(std::span<const std::uint8_t> le) {
  std::uint8_t tmp[11] = {kLong1, static_cast<std::uint8_t>(le.size())};
  std::memcpy(tmp + 2, le.data(), le.size());
  put({tmp, 2 + le.size()});
}

void Pickler::real(double v) {
  const auto bits = std::bit_cast<std::uint64_t>(v);
  std::uint8_t tmp[9] = {kBinFloat};
  for (std::size_t i = 0; i < 8; ++i) tmp[1 + i] = static_cast<std::uint8_t>(bits >> (8 * (7 - i)));
  put({tmp, 9});
}

void Pickler::str(std::string_view text) {
  if (auto it = str_memo_.find(text); it != str_memo_.end()) return get(it->second);
  writeStrPayload(text);
  str_memo_.emplace(std::string(text), memoize());
}

void Pickler::writeStrPayload(std::string_view text) {
  const std::uint64_t n = text.size();
  const std::span<const std::uint8_t> payload(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  if (n <= 0xff && protocol_ >= 4) {
    putLE(kShortBinUnicode, n, 1);
  } else if (n > 0xffffffffu) {
    if (protocol_ < 4) return setError(Status::error(fmt::format("a string of {} bytes needs protocol 4", n)));
    putLE(kBinUnicode8, n, 8);
  } else {
    putLE(kBinUnicode, n, 4);
  }
  if (framing_ && n >= kFrameTarget) {
    // Like Python: a large payload goes out unframed, after the frame holding its header.
    const std::uint8_t* header_end = buf_.data() + buf_.size();
    const std::size_t header_len = n <= 0xff ? 2 : n > 0xffffffffu ? 9 : 5;
    const std::vector<std::uint8_t> header(header_end - header_len, header_end);
    buf_.resize(buf_.size() - header_len);
    commitFrame();
    buf_.insert(buf_.end(), header.begin(), header.end());
    buf_.insert(buf_.end(), payload.begin(), payload.end());
    flush();
    return;
  }
  put(payload);
}

std::uint32_t Pickler::memoize() {
  const std::uint32_t slot = next_memo_++;
  if (protocol_ >= 4) {
    op(kMemoize);
  } else if (slot <= 0xff) {
    putLE(kBinPut, slot, 1);
  } else {
    putLE(kLongBinPut, slot, 4);
  }
  return slot;
}

void Pickler::get(std::uint32_t slot) {
  if (slot <= 0xff) return putLE(kBinGet, slot, 1);
  putLE(kLongBinGet, slot, 4);
}

}  // namespace reservoir::traces::detail
