// Exact fractions for fitting laws: 128-bit numerators and denominators, every operation
// checked (an overflow is no value, never a wrapped-around one). No floating point.
#pragma once

#include <cstdint>
#include <optional>

namespace reservoir::replay::scale::detail {

__extension__ using Int128 = __int128;

struct Q {
  Int128 n = 0, d = 1;  // d > 0, gcd(n, d) = 1
  [[nodiscard]] bool zero() const { return n == 0; }
  [[nodiscard]] bool whole() const { return d == 1; }
};

inline Int128 gcd128(Int128 a, Int128 b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    const Int128 t = a % b;
    a = b, b = t;
  }
  return a;
}

inline std::optional<Q> makeQ(Int128 n, Int128 d) {
  if (d == 0) return std::nullopt;
  if (d < 0) {
    if (__builtin_sub_overflow(Int128{0}, n, &n) || __builtin_sub_overflow(Int128{0}, d, &d)) return std::nullopt;
  }
  const Int128 g = gcd128(n, d);
  if (g > 1) n /= g, d /= g;
  return Q{n, d};
}

inline std::optional<Q> mulQ(const Q& a, const Q& b) {
  const Int128 g1 = gcd128(a.n, b.d), g2 = gcd128(b.n, a.d);
  const Int128 an = g1 > 1 ? a.n / g1 : a.n, bd = g1 > 1 ? b.d / g1 : b.d;
  const Int128 bn = g2 > 1 ? b.n / g2 : b.n, ad = g2 > 1 ? a.d / g2 : a.d;
  Int128 n = 0, d = 0;
  if (__builtin_mul_overflow(an, bn, &n) || __builtin_mul_overflow(ad, bd, &d)) return std::nullopt;
  return makeQ(n, d);
}

inline std::optional<Q> addQ(const Q& a, const Q& b) {
  const Int128 g = gcd128(a.d, b.d);
  Int128 l = 0, x = 0, y = 0, n = 0;
  if (__builtin_mul_overflow(a.d / g, b.d, &l)) return std::nullopt;
  if (__builtin_mul_overflow(a.n, l / a.d, &x) || __builtin_mul_overflow(b.n, l / b.d, &y)) return std::nullopt;
  if (__builtin_add_overflow(x, y, &n)) return std::nullopt;
  return makeQ(n, l);
}

inline std::optional<Q> negQ(const Q& a) { return makeQ(-a.n, a.d); }
inline std::optional<Q> subQ(const Q& a, const Q& b) {
  auto nb = negQ(b);
  return nb ? addQ(a, *nb) : std::nullopt;
}
inline std::optional<Q> divQ(const Q& a, const Q& b) {
  if (b.n == 0) return std::nullopt;
  auto inv = makeQ(b.d, b.n);
  return inv ? mulQ(a, *inv) : std::nullopt;
}
inline bool equalQ(const Q& a, const Q& b) { return a.n == b.n && a.d == b.d; }

}  // namespace reservoir::replay::scale::detail
