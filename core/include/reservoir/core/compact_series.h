// A series of 64-bit integers that changes at nearly every index (each trace entry's time; live
// bytes per event; allocated and active bytes per op), kept in blocks of 64 values: each value as
// its offset from the block's least value, in units of the largest power of two that divides
// every offset of the block (the allocator's bytes come in blocks of 512), packed in as many bits
// as the block's largest offset needs. Times a few microseconds apart take a byte a value, byte
// counts moving by megabytes three; 0.25 bytes a value for the block's header (StepSeries is the
// form for series that change at few indices).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

namespace reservoir {

class CompactSeries {
 public:
  static constexpr std::size_t kBlock = 64;

  CompactSeries() = default;
  // From plain values (tests, small series).
  explicit CompactSeries(const std::vector<std::int64_t>& values) {
    for (const std::int64_t v : values) push_back(v);
  }
  CompactSeries(std::initializer_list<std::int64_t> values) {
    for (const std::int64_t v : values) push_back(v);
  }

  void push_back(std::int64_t v) {
    if (tail_.capacity() < kBlock) tail_.reserve(kBlock);
    tail_.push_back(v);
    if (tail_.size() == kBlock) seal();
  }
  // Appends `later` (a run's curve taken in pieces).
  void append(const CompactSeries& later) {
    for (std::size_t i = 0; i < later.size(); ++i) push_back(later[i]);
  }
  void clear() {
    blocks_.clear();
    packed_.clear();
    tail_.clear();
  }
  // Room for n values in all at up to `bytes_per_value` each, so that a series filled piece by
  // piece grows once (address space only: memory is taken as the values come).
  void reserve(std::size_t n, std::size_t bytes_per_value = sizeof(std::int64_t)) {
    blocks_.reserve(n / kBlock + 1);
    packed_.reserve(n * bytes_per_value + kPad);
  }

  [[nodiscard]] std::int64_t operator[](std::size_t i) const {
    const std::size_t b = i / kBlock;
    if (b < blocks_.size()) [[likely]] {
      const Block& blk = blocks_[b];
      const std::uint64_t bit = static_cast<std::uint64_t>(blk.bits) * (i % kBlock);
      std::uint64_t word = 0;
      std::memcpy(&word, packed_.data() + std::size_t{blk.at} * 8 + bit / 8, sizeof word);
      word = (word >> (bit % 8)) & maskOf(blk.bits);
      // Modulo 2^64 the sum is the value, which an int64 holds.
      return static_cast<std::int64_t>(static_cast<std::uint64_t>(blk.base) + (word << blk.shift));
    }
    return tail_[i % kBlock];
  }
  [[nodiscard]] std::int64_t back() const { return (*this)[size() - 1]; }
  [[nodiscard]] std::size_t size() const { return blocks_.size() * kBlock + tail_.size(); }
  [[nodiscard]] bool empty() const { return size() == 0; }
  // The bytes its values take (blocks and packed offsets; not the room reserved for more).
  [[nodiscard]] std::size_t memoryBytes() const {
    return blocks_.size() * sizeof(Block) + packed_.size() + tail_.capacity() * sizeof(std::int64_t);
  }
  [[nodiscard]] std::vector<std::int64_t> values() const {
    std::vector<std::int64_t> out(size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = (*this)[i];
    return out;
  }
  // Its storage, for a cache of what a read made (traces' snapshot cache): `save` writes it through
  // out.u64(v) and out.bytes(data, n); `load` reads it back through in.u64() and in.bytes(data, n)
  // (false where the bytes do not make a series: a block past the packed bytes, a width not made).
  template <typename Out>
  void save(Out& out) const {
    out.u64(blocks_.size());
    for (const Block& b : blocks_) {
      out.u64(static_cast<std::uint64_t>(b.base));
      out.u64(std::uint64_t{b.at} | std::uint64_t{b.bits} << 32 | std::uint64_t{b.shift} << 40);
    }
    out.u64(packed_.size());
    out.bytes(packed_.data(), packed_.size());
    out.u64(tail_.size());
    for (const std::int64_t v : tail_) out.u64(static_cast<std::uint64_t>(v));
  }
  template <typename In>
  bool load(In& in) {
    clear();
    const std::uint64_t blocks = in.u64();
    if (!in.fits(blocks, 16)) return false;
    blocks_.resize(blocks);
    for (Block& b : blocks_) {
      b.base = static_cast<std::int64_t>(in.u64());
      const std::uint64_t w = in.u64();
      b.at = static_cast<std::uint32_t>(w);
      b.bits = static_cast<std::uint8_t>(w >> 32);
      b.shift = static_cast<std::uint8_t>(w >> 40);
      if (w >> 48 || (b.bits > kMaxPackedBits && b.bits != 64) || b.shift >= 64) return false;
    }
    const std::uint64_t packed = in.u64();
    if (!in.fits(packed, 1)) return false;
    packed_.resize(packed);
    in.bytes(packed_.data(), packed);
    for (const Block& b : blocks_)
      if (std::uint64_t{b.at} * 8 + std::uint64_t{b.bits} * 8 + kPad > packed) return false;
    const std::uint64_t tail = in.u64();
    if (tail >= kBlock || (blocks_.empty() && !packed_.empty())) return false;
    tail_.reserve(kBlock);
    for (std::uint64_t i = 0; i < tail; ++i) tail_.push_back(static_cast<std::int64_t>(in.u64()));
    return in.ok();
  }

  bool operator==(const CompactSeries& o) const {
    if (size() != o.size()) return false;
    for (std::size_t i = 0; i < size(); ++i)
      if ((*this)[i] != o[i]) return false;
    return true;
  }

 private:
  // A value is read as the 8 bytes at its first bit's byte: an offset of up to 57 bits fits
  // beside the 7 bits before it; a wider block takes 64 bits a value, each starting on a byte.
  static constexpr unsigned kMaxPackedBits = 57;
  static constexpr std::size_t kPad = sizeof(std::uint64_t);  // the last value's 8-byte read

  struct Block {
    std::int64_t base = 0;   // the block's least value
    std::uint32_t at = 0;    // its first byte in packed_, over 8 (a block takes 8 bytes per bit of its offsets)
    std::uint8_t bits = 0;   // per offset: 0 (all equal) to 57, or 64
    std::uint8_t shift = 0;  // offsets are in units of 2^shift
  };

  static constexpr std::uint64_t maskOf(unsigned bits) {
    return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  }

  void seal() {
    std::int64_t base = tail_[0], top = tail_[0];
    for (const std::int64_t v : tail_) {
      base = std::min(base, v);
      top = std::max(top, v);
    }
    const auto offsetOf = [base](std::int64_t v) {  // exact: v >= base
      return static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(base);
    };
    std::uint64_t any = 0;  // every offset's bits: their common trailing zeros are the unit
    for (const std::int64_t v : tail_) any |= offsetOf(v);
    const int shift = any == 0 ? 0 : std::countr_zero(any);
    unsigned bits = static_cast<unsigned>(std::bit_width(offsetOf(top) >> shift));
    if (bits > kMaxPackedBits) bits = 64;

    Block blk;
    blk.base = base;
    const std::size_t at = packed_.empty() ? 0 : packed_.size() - kPad;  // a multiple of 8
    blk.at = static_cast<std::uint32_t>(at / 8);
    blk.bits = static_cast<std::uint8_t>(bits);
    blk.shift = static_cast<std::uint8_t>(shift);
    packed_.resize(at + bits * kBlock / 8 + kPad);
    if (bits > 0) pack(packed_.data() + at, bits, shift, offsetOf);
    blocks_.push_back(blk);
    tail_.clear();
  }

  // Writes the block's offsets, `bits` each from bit 0 at `out`, a word at a time (64 offsets
  // take exactly `bits` words), as the reads above find them.
  template <typename OffsetOf>
  void pack(std::uint8_t* out, unsigned bits, int shift, OffsetOf offsetOf) const {
    std::uint64_t word = 0;
    unsigned filled = 0;  // bits of `word` taken, < 64
    for (const std::int64_t v : tail_) {
      const std::uint64_t o = offsetOf(v) >> shift;
      word |= o << filled;
      filled += bits;
      if (filled >= 64) {
        std::memcpy(out, &word, sizeof word);
        out += sizeof word;
        filled -= 64;
        word = filled == 0 ? 0 : o >> (bits - filled);  // the offset's bits that did not fit
      }
    }
  }

  std::vector<Block> blocks_;
  std::vector<std::uint8_t> packed_;  // the blocks' offsets, then kPad bytes of zeros
  // The values after the last block (on the heap: an empty series is three empty vectors, and a
  // reader's containers each hold one).
  std::vector<std::int64_t> tail_;
};

}  // namespace reservoir
