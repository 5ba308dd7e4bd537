// The what-if fuzzer's input read as a recipe: integers, booleans and fractions taken from the
// end of the bytes, with the same bytes-to-values rule as libFuzzer's FuzzedDataProvider (so the
// committed corpus means the same recipes whether the target is linked into libFuzzer or into
// the corpus replay that the tests run with gcc, where that header does not exist).
//
// The rule: an integer in [min, max] takes one byte from the end per 8 bits of (max - min), at
// most its type's width, big-endian in the order taken, and is reduced modulo the range size;
// with no bytes left it is min. A boolean is the low bit of one byte. A fraction is a full-width
// unsigned integer (32 bits for float, 64 for double) over that type's maximum. A floating-point
// value over the whole type takes one boolean (the upper or lower half) and then a fraction.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <type_traits>

namespace reservoir::fuzz {

class RecipeBytes {
 public:
  RecipeBytes(const std::uint8_t* data, std::size_t size) : data_(data), left_(size) {}

  [[nodiscard]] std::size_t remaining_bytes() const { return left_; }

  template <typename T>
  T ConsumeIntegralInRange(T min, T max) {
    static_assert(std::is_integral_v<T> && sizeof(T) <= sizeof(std::uint64_t));
    if (min > max) std::abort();
    const std::uint64_t span = static_cast<std::uint64_t>(max) - static_cast<std::uint64_t>(min);
    std::uint64_t value = 0;
    for (std::size_t bits = 0; bits < sizeof(T) * CHAR_BIT && (span >> bits) != 0 && left_ != 0; bits += CHAR_BIT)
      value = (value << CHAR_BIT) | data_[--left_];
    if (span != std::numeric_limits<std::uint64_t>::max()) value %= span + 1;
    return static_cast<T>(static_cast<std::uint64_t>(min) + value);
  }

  template <typename T>
  T ConsumeIntegral() {
    return ConsumeIntegralInRange(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
  }

  bool ConsumeBool() { return (ConsumeIntegral<std::uint8_t>() & 1) != 0; }

  template <typename T>
  T ConsumeProbability() {
    static_assert(std::is_floating_point_v<T>);
    using Whole = std::conditional_t<sizeof(T) <= sizeof(std::uint32_t), std::uint32_t, std::uint64_t>;
    return static_cast<T>(ConsumeIntegral<Whole>()) / static_cast<T>(std::numeric_limits<Whole>::max());
  }

  // Any finite value of T: the whole range is wider than T can hold, so it is taken in halves.
  template <typename T>
  T ConsumeFloatingPoint() {
    static_assert(std::is_floating_point_v<T>);
    const T half = std::numeric_limits<T>::max() / 2 - std::numeric_limits<T>::lowest() / 2;
    T value = std::numeric_limits<T>::lowest();
    if (ConsumeBool()) value += half;
    return value + half * ConsumeProbability<T>();
  }

 private:
  const std::uint8_t* data_;
  std::size_t left_;
};

}  // namespace reservoir::fuzz
