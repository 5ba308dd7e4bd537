// A map from 64-bit keys to small values: open addressing (linear probing, backward-shift
// erase), a few times faster than std::unordered_map for the request stream's live blocks and
// without a node per entry.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace reservoir::traces::detail {

template <typename Value>
class KeyTable {
 public:
  explicit KeyTable(std::size_t expected) { rehash(std::bit_ceil(std::max<std::size_t>(64, expected * 2))); }

  // The slot holding `key`, or kMissing.
  [[nodiscard]] std::size_t find(std::uint64_t key) const {
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      if (!slots_[i].used) return kMissing;
      if (slots_[i].key == key) return i;
    }
  }
  [[nodiscard]] Value& at(std::size_t slot) { return slots_[slot].value; }
  [[nodiscard]] const Value& at(std::size_t slot) const { return slots_[slot].value; }
  void put(std::uint64_t key, const Value& value) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    std::size_t i = home(key);
    for (; slots_[i].used; i = (i + 1) & mask_)
      if (slots_[i].key == key) {
        slots_[i].value = value;
        return;
      }
    slots_[i] = Slot{key, value, true};
    ++size_;
  }
  void erase(std::size_t slot) {
    // Backward shift: move later entries of the probe run into the hole.
    std::size_t hole = slot;
    for (std::size_t j = (hole + 1) & mask_; slots_[j].used; j = (j + 1) & mask_) {
      const std::size_t h = home(slots_[j].key);
      // Movable when its home is not in (hole, j], cyclically.
      if (((j - h) & mask_) >= ((j - hole) & mask_)) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].used = false;
    --size_;
  }
  // Calls f(key, value) for every entry, in no particular order.
  template <typename F>
  void forEach(F&& f) const {
    for (const Slot& s : slots_)
      if (s.used) f(s.key, s.value);
  }
  static constexpr std::size_t kMissing = ~std::size_t{0};

 private:
  struct Slot {
    std::uint64_t key = 0;
    Value value{};
    bool used = false;
  };
  [[nodiscard]] std::size_t home(std::uint64_t key) const {
    const std::uint64_t h = key * 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(h >> 32) & mask_;
  }
  void rehash(std::size_t n) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(n, Slot{});
    mask_ = n - 1;
    size_ = 0;
    for (const Slot& s : old)
      if (s.used) put(s.key, s.value);
  }
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace reservoir::traces::detail
