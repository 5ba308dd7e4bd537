// A series of byte counts that changes at nearly every index (live bytes per event; allocated and
// active bytes per op), kept in blocks of 64 values: each value as a 32-bit offset from its
// block's first value, in units of the largest power of two that divides every offset of the block
// (the allocator's bytes come in blocks of 512: a block that moves by gigabytes stays narrow), or
// the block whole (as well) where an offset would still not fit. About 4.3 bytes a value instead
// of 8 (StepSeries is the form for series that change at few indices).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace reservoir::replay {

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
    tail_[tail_n_++] = v;
    if (tail_n_ == kBlock) seal();
  }
  // Appends `later` (a run's curve taken in pieces).
  void append(const CompactSeries& later) {
    for (std::size_t i = 0; i < later.size(); ++i) push_back(later[i]);
  }
  void clear() {
    blocks_.clear();
    narrow_.clear();
    wide_.clear();
    tail_n_ = 0;
  }
  // Room for n values in all (narrow blocks), so a series filled piece by piece grows once.
  void reserve(std::size_t n) {
    blocks_.reserve(n / kBlock + 1);
    narrow_.reserve(n);
  }

  [[nodiscard]] std::int64_t operator[](std::size_t i) const {
    const std::size_t b = i / kBlock;
    if (b < blocks_.size()) [[likely]] {
      const Block& blk = blocks_[b];
      return blk.wide ? wide_[blk.at + i % kBlock] : blk.base + (std::int64_t{narrow_[i]} << blk.shift);
    }
    return tail_[i % kBlock];
  }
  [[nodiscard]] std::int64_t back() const { return (*this)[size() - 1]; }
  [[nodiscard]] std::size_t size() const { return blocks_.size() * kBlock + tail_n_; }
  [[nodiscard]] bool empty() const { return size() == 0; }
  [[nodiscard]] std::size_t memoryBytes() const {
    return blocks_.capacity() * sizeof(Block) + narrow_.capacity() * sizeof(std::int32_t) +
           wide_.capacity() * sizeof(std::int64_t);
  }
  [[nodiscard]] std::vector<std::int64_t> values() const {
    std::vector<std::int64_t> out(size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = (*this)[i];
    return out;
  }
  bool operator==(const CompactSeries& o) const {
    if (size() != o.size()) return false;
    for (std::size_t i = 0; i < size(); ++i)
      if ((*this)[i] != o[i]) return false;
    return true;
  }

 private:
  struct Block {
    std::int64_t base = 0;
    std::uint32_t at = 0;  // a wide block: the first index of its values in wide_
    bool wide = false;
    std::uint8_t shift = 0;  // a narrow block: its offsets are in units of 2^shift
  };

  void seal() {
    const std::int64_t base = tail_[0];
    std::array<std::int64_t, kBlock> offset{};
    std::uint64_t bits = 0;  // every offset's bits: their common trailing zeros are the unit
    bool fits = true;
    for (std::size_t k = 0; k < kBlock && fits; ++k) {
      fits = !__builtin_sub_overflow(tail_[k], base, &offset[k]);
      bits |= static_cast<std::uint64_t>(offset[k]);
    }
    const int shift = bits == 0 ? 0 : __builtin_ctzll(bits);
    // Each offset is a multiple of 2^shift: shifted right it is exact, and shifted back the value.
    for (std::size_t k = 0; k < kBlock && fits; ++k) {
      offset[k] >>= shift;
      fits = offset[k] >= INT32_MIN && offset[k] <= INT32_MAX;
    }
    Block blk;
    blk.base = base;
    blk.wide = !fits;
    blk.shift = fits ? static_cast<std::uint8_t>(shift) : 0;
    // narrow_ has a slot per value, so that a narrow value is found by its index alone; a wide
    // block leaves its slots at 0 and keeps its values in wide_.
    for (std::size_t k = 0; k < kBlock; ++k) narrow_.push_back(fits ? static_cast<std::int32_t>(offset[k]) : 0);
    if (!fits) {
      blk.at = static_cast<std::uint32_t>(wide_.size());
      wide_.insert(wide_.end(), tail_.begin(), tail_.end());
    }
    blocks_.push_back(blk);
    tail_n_ = 0;
  }

  std::vector<Block> blocks_;
  std::vector<std::int32_t> narrow_;
  std::vector<std::int64_t> wide_;
  std::array<std::int64_t, kBlock> tail_{};
  std::size_t tail_n_ = 0;
};

}  // namespace reservoir::replay
