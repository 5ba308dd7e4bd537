// A small open-addressing hash map from uint32 keys (allocation ids) to trivially-copyable
// values: linear probing, backward-shift deletion, no tombstones. Memory follows the number of
// live entries, so checkpoints of a replay stay small; lookups touch one cache line.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace reservoir::replay::detail {

template <typename V>
class FlatMap {
  static constexpr std::uint32_t kEmpty = 0xffffffffu;
  struct Slot {
    std::uint32_t key = kEmpty;
    V value{};
  };

 public:
  FlatMap() : slots_(16) {}

  [[nodiscard]] std::size_t size() const { return size_; }
  V* find(std::uint32_t key) {
    for (std::size_t i = home(key);; i = (i + 1) & mask()) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == kEmpty) return nullptr;
    }
  }
  void set(std::uint32_t key, const V& value) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    for (std::size_t i = home(key);; i = (i + 1) & mask()) {
      if (slots_[i].key == key) {
        slots_[i].value = value;
        return;
      }
      if (slots_[i].key == kEmpty) {
        slots_[i] = Slot{key, value};
        ++size_;
        return;
      }
    }
  }
  bool erase(std::uint32_t key) {
    std::size_t i = home(key);
    for (;; i = (i + 1) & mask()) {
      if (slots_[i].key == kEmpty) return false;
      if (slots_[i].key == key) break;
    }
    // Backward shift: pull later entries of the cluster into the hole when it is on their way.
    for (std::size_t j = (i + 1) & mask();; j = (j + 1) & mask()) {
      if (slots_[j].key == kEmpty) break;
      const std::size_t h = home(slots_[j].key);
      const bool between = i <= j ? (h <= i || h > j) : (h <= i && h > j);
      if (between) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i].key = kEmpty;
    --size_;
    return true;
  }
  template <typename F>
  void forEach(F f) const {
    for (const Slot& s : slots_)
      if (s.key != kEmpty) f(s.key, s.value);
  }

 private:
  [[nodiscard]] std::size_t mask() const { return slots_.size() - 1; }
  [[nodiscard]] std::size_t home(std::uint32_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B1u) >> 7) & mask();
  }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.size() * 2, Slot{});
    size_ = 0;
    for (const Slot& s : old)
      if (s.key != kEmpty) set(s.key, s.value);
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

}  // namespace reservoir::replay::detail
