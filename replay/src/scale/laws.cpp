// Size laws: exact evaluation from the points a law goes through, and the fitting order.
#include "laws.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace reservoir::replay::scale {
namespace {

using detail::Int128;
using detail::Q;

// The size a kTerms law gives at the parameters: rounded to whole bytes (`exact` cleared when it
// is not whole), out of range (kMaxRequestBytes + 1, `exact` cleared) on an overflow.
std::int64_t evaluateTerms(const Law& law, const Params& params, bool* exact) {
  Q sum{0, 1};
  bool ok = law.terms.size() == law.coefs.size();
  for (std::size_t i = 0; ok && i < law.terms.size(); ++i) {
    auto v = detail::termValue(law.terms[i], params);
    auto c = detail::makeQ(law.coefs[i].num, law.coefs[i].den);
    auto prod = v && c ? detail::mulQ(*v, *c) : std::nullopt;
    auto next = prod ? detail::addQ(sum, *prod) : std::nullopt;
    ok = next.has_value();
    if (ok) sum = *next;
  }
  if (!ok || sum.n / sum.d > kMaxRequestBytes) {
    if (exact) *exact = false;
    return kMaxRequestBytes + 1;
  }
  if (!sum.whole() && exact) *exact = false;
  Int128 q = sum.n / sum.d;
  if (sum.n % sum.d != 0 && sum.n > 0) ++q;  // a fraction of a byte: rounded up
  if (q < 0) {
    if (exact) *exact = false;
    q = 0;
  }
  return static_cast<std::int64_t>(q);
}

// num / den rounded (up for shards: padding only adds), with `exact` cleared when inexact.
// Past kMaxRequestBytes the value is out of range: kMaxRequestBytes + 1, inexact.
std::int64_t divide(Int128 num, Int128 den, bool round_up, bool* exact) {
  if (den < 0) num = -num, den = -den;
  Int128 q = num / den;
  const Int128 r = num % den;
  if (r != 0) {
    if (exact) *exact = false;
    if (round_up) {
      if (r > 0) ++q;
    } else if (2 * (r < 0 ? -r : r) >= den) {
      q += r > 0 ? 1 : -1;
    }
  }
  if (q < 0) {
    if (exact) *exact = false;
    q = 0;
  }
  if (q > kMaxRequestBytes) {
    if (exact) *exact = false;
    return kMaxRequestBytes + 1;
  }
  return static_cast<std::int64_t>(q);
}

// a * b, or none past 2^127.
std::optional<Int128> mul(Int128 a, Int128 b) {
  Int128 r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The quadratic through three points at x, in floating point (for values too large for the
// exact form), rounded to whole bytes and clamped at 0.
std::int64_t quadraticApprox(const std::vector<std::pair<std::int64_t, std::int64_t>>& b, long double x) {
  long double v = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    long double term = static_cast<long double>(b[i].second);
    for (std::size_t j = 0; j < 3; ++j)
      if (j != i)
        term *= (x - static_cast<long double>(b[j].first)) / static_cast<long double>(b[i].first - b[j].first);
    v += term;
  }
  constexpr auto kMax = static_cast<long double>(kMaxRequestBytes + 1);  // out of range past it
  return v <= 0 ? 0 : static_cast<std::int64_t>(std::llround(std::min(v, kMax)));
}

}  // namespace

std::string_view lawKindName(LawKind kind) {
  switch (kind) {
    case LawKind::kConstant: return "constant";
    case LawKind::kAffine: return "affine";
    case LawKind::kShard: return "shard";
    case LawKind::kQuadratic: return "quadratic";
    case LawKind::kUnexplained: return "unexplained";
    case LawKind::kTerms: return "terms";
  }
  return "?";
}

std::int64_t Law::evaluate(const Params& params, bool* exact) const {
  if (exact) *exact = true;
  if (kind == LawKind::kTerms) return evaluateTerms(*this, params, exact);
  if (basis.empty()) return 0;
  const auto [x0, s0] = basis[0];
  if (kind == LawKind::kConstant || kind == LawKind::kUnexplained || basis.size() < 2) return s0;
  const auto xv = variableValue(params, variable);
  if (!xv) {
    if (exact) *exact = false;
    return s0;
  }
  const Int128 x = *xv;
  const auto [x1, s1] = basis[1];
  const auto out_of_range = [&] {
    if (exact) *exact = false;
    return kMaxRequestBytes + 1;
  };
  switch (kind) {
    case LawKind::kAffine: {
      const auto a = mul(Int128{s0}, Int128{x1} - x0), b = mul(Int128{s1} - s0, x - x0);
      if (!a || !b) return out_of_range();
      return divide(*a + *b, Int128{x1} - x0, false, exact);
    }
    case LawKind::kShard: {
      if (x == 0) {
        if (exact) *exact = false;
        return s0;
      }
      // s = s0 + (s1 - s0) * x1 * (x0 - x) / (x * (x0 - x1))
      const auto den = mul(x, Int128{x0} - x1);
      const auto a = den ? mul(Int128{s0}, *den) : std::nullopt;
      const auto b0 = mul(Int128{s1} - s0, x1);
      const auto b = b0 ? mul(*b0, Int128{x0} - x) : std::nullopt;
      if (!a || !b) return out_of_range();
      return divide(*a + *b, *den, true, exact);
    }
    case LawKind::kQuadratic: {
      const auto [x2, s2] = basis[2];
      constexpr std::int64_t kExactBound = std::int64_t{1} << 31;  // keeps the products below 2^127
      const auto big = [&](Int128 v) { return v > kExactBound || v < -kExactBound; };
      if (big(x) || big(x0) || big(x1) || big(x2)) {
        if (exact) *exact = false;
        return quadraticApprox(basis, static_cast<long double>(*xv));
      }
      const Int128 d = Int128{x0 - x1} * (x0 - x2) * (x1 - x2);
      const Int128 num = Int128{s0} * (x - x1) * (x - x2) * (x1 - x2) - Int128{s1} * (x - x0) * (x - x2) * (x0 - x2) +
                         Int128{s2} * (x - x0) * (x - x1) * (x0 - x1);
      return divide(num, d, false, exact);
    }
    default: return s0;
  }
}

std::string Law::className() const {
  if (kind == LawKind::kConstant || kind == LawKind::kUnexplained) return std::string(lawKindName(kind));
  if (kind == LawKind::kTerms) {
    std::string s;
    for (const auto& t : terms) s += (s.empty() ? "" : " + ") + t.name();
    return fmt::format("terms({})", s);
  }
  return fmt::format("{}({})", lawKindName(kind), variable);
}

std::string Law::describe() const {
  if (kind == LawKind::kTerms) {
    std::string s;
    for (std::size_t i = 0; i < terms.size() && i < coefs.size(); ++i) {
      const auto& c = coefs[i];
      const std::string k = c.den == 1 ? std::to_string(c.num) : fmt::format("({}/{})", c.num, c.den);
      s += (s.empty() ? "" : " + ") + (terms[i].name() == "1" ? k : k + "*" + terms[i].name());
    }
    return "terms = " + s;
  }
  if (basis.empty()) return className();
  using LD = long double;
  const LD x0 = static_cast<LD>(basis[0].first), s0 = static_cast<LD>(basis[0].second);
  if (kind == LawKind::kConstant) return fmt::format("constant {}", basis[0].second);
  if (kind == LawKind::kUnexplained) return fmt::format("unexplained (the template's {} kept)", basis[0].second);
  const LD x1 = static_cast<LD>(basis[1].first), s1 = static_cast<LD>(basis[1].second);
  const auto& v = variable;
  if (kind == LawKind::kAffine) {
    const LD b = (s1 - s0) / (x1 - x0);
    return fmt::format("{} = {:.10g} + {:.10g}*{}", className(), static_cast<double>(s0 - b * x0),
                       static_cast<double>(b), v);
  }
  if (kind == LawKind::kShard) {
    const LD k = (s0 - s1) * x0 * x1 / (x1 - x0);
    return fmt::format("{} = {:.10g} + {:.10g}/{} (= c + ceil(dim0/{})*row while {} divides dim0)", className(),
                       static_cast<double>(s0 - k / x0), static_cast<double>(k), v, v, v);
  }
  const LD x2 = static_cast<LD>(basis[2].first), s2 = static_cast<LD>(basis[2].second);
  // Divided differences.
  const LD f01 = (s1 - s0) / (x1 - x0), f12 = (s2 - s1) / (x2 - x1), f012 = (f12 - f01) / (x2 - x0);
  const LD c2 = f012, c1 = f01 - f012 * (x0 + x1), c0 = s0 - f01 * x0 + f012 * x0 * x1;
  return fmt::format("{} = {:.10g} + {:.10g}*{} + {:.10g}*{}^2", className(), static_cast<double>(c0),
                     static_cast<double>(c1), v, static_cast<double>(c2), v);
}

namespace detail {

std::vector<std::string> lawVariables(const std::vector<Input>& inputs) {
  std::vector<std::string> vars;
  bool all_seq = !inputs.empty(), all_world = !inputs.empty();
  std::vector<std::string> others;
  for (const auto& in : inputs) {
    all_seq = all_seq && in.params.count("seq");
    all_world = all_world && in.params.count("world");
    for (const auto& [k, v] : in.params)
      if (k != "world" && std::find(others.begin(), others.end(), k) == others.end()) others.push_back(k);
  }
  if (all_seq) vars.push_back("tokens");
  if (all_world) vars.push_back("world");
  for (auto& o : others) vars.push_back(o);
  return vars;
}

namespace {

bool fitsAll(const Law& law, const std::vector<Point>& points) {
  for (const auto& p : points) {
    bool exact = true;
    if (law.evaluate(*p.params, &exact) != p.size || !exact) return false;
  }
  return true;
}

// x -> size over the points, or empty when the size is not a function of the variable.
std::optional<std::map<std::int64_t, std::int64_t>> asFunction(const std::vector<Point>& points, const std::string& v) {
  std::map<std::int64_t, std::int64_t> f;
  for (const auto& p : points) {
    auto x = variableValue(*p.params, v);
    if (!x) return std::nullopt;
    auto [it, inserted] = f.emplace(*x, p.size);
    if (!inserted && it->second != p.size) return std::nullopt;
  }
  return f;
}

std::optional<Law> fitVariable(const std::vector<Point>& points, const std::string& v) {
  auto f = asFunction(points, v);
  if (!f || f->size() < 2) return std::nullopt;
  std::vector<std::pair<std::int64_t, std::int64_t>> xs(f->begin(), f->end());
  Law law;
  law.variable = v;
  if (v == "world" && xs[0].first > 0) {
    law.kind = LawKind::kShard;
    law.basis = {xs[0], xs[1]};
    if (fitsAll(law, points)) return law;
  }
  law.kind = LawKind::kAffine;
  law.basis = {xs[0], xs[1]};
  if (fitsAll(law, points)) return law;
  if (xs.size() >= 3 && v != "world") {
    law.kind = LawKind::kQuadratic;
    law.basis = {xs[0], xs[1], xs[2]};
    if (fitsAll(law, points)) return law;
  }
  return std::nullopt;
}

}  // namespace

Law fitLaw(const std::vector<Point>& points, const std::vector<std::string>& variables) {
  Law law;
  if (points.empty()) {
    law.kind = LawKind::kUnexplained;
    return law;
  }
  const bool constant =
      std::all_of(points.begin(), points.end(), [&](const Point& p) { return p.size == points[0].size; });
  if (constant) {
    law.basis = {{0, points[0].size}};
    return law;
  }
  for (const auto& v : variables)
    if (auto fitted = fitVariable(points, v)) return *fitted;
  law.kind = LawKind::kUnexplained;
  return law;
}

}  // namespace detail
}  // namespace reservoir::replay::scale
