// Laws in several parameters at once: sums of terms (monomials of tokens, seq, batch and world,
// FSDP2's padded shards), solved exactly over the rationals, simplest first; the capture to add
// where the inputs cannot tell.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "laws.h"

namespace reservoir::replay::scale {

std::string LawTerm::name() const {
  if (kind == Kind::kShard) return fmt::format("ceil({}/world)", dim0);
  if (kind == Kind::kGathered) return fmt::format("world*ceil({}/world)", dim0);
  std::string num;
  const auto factor = [&](const char* v, int e) {
    for (int i = 0; i < e; ++i) num += (num.empty() ? "" : "*") + std::string(v);
  };
  factor("tokens", tokens), factor("seq", seq), factor("batch", batch), factor("world", world);
  if (num.empty()) num = "1";
  return world < 0 ? num + "/world" : num;
}

namespace detail {
namespace {

constexpr const char* kShape[] = {"world", "seq", "batch"};

std::optional<std::int64_t> param(const Params& p, const char* name) {
  auto it = p.find(name);
  if (it == p.end()) return std::nullopt;
  return it->second;
}

std::optional<Q> power(Int128 base, int exponent) {
  Q q{1, 1};
  for (int i = 0; i < exponent; ++i) {
    auto next = mulQ(q, Q{base, 1});
    if (!next) return std::nullopt;
    q = *next;
  }
  return q;
}

// One distinct parameter vector of the points with its size (none where two sizes disagree).
struct Distinct {
  const Params* params;
  std::int64_t size;
};

std::optional<std::vector<Distinct>> distinctPoints(const std::vector<Point>& points) {
  std::vector<Distinct> out;
  for (const auto& p : points) {
    auto same = std::find_if(out.begin(), out.end(), [&](const Distinct& d) { return *d.params == *p.params; });
    if (same == out.end())
      out.push_back({p.params, p.size});
    else if (same->size != p.size)
      return std::nullopt;
  }
  return out;
}

// Solves A x = b exactly (A: rows x k); the unique solution, or none when A has not full column
// rank, the system is inconsistent, or a value overflows.
std::optional<std::vector<Q>> solve(std::vector<std::vector<Q>> a) {
  const std::size_t rows = a.size(), k = a.empty() ? 0 : a[0].size() - 1;
  std::size_t r = 0;
  for (std::size_t c = 0; c < k; ++c, ++r) {
    std::size_t p = r;
    while (p < rows && a[p][c].zero()) ++p;
    if (p == rows) return std::nullopt;  // a column the others explain: a smaller law has the same fit
    std::swap(a[p], a[r]);
    const Q pivot = a[r][c];
    for (auto& v : a[r]) {
      auto q = divQ(v, pivot);
      if (!q) return std::nullopt;
      v = *q;
    }
    for (std::size_t i = 0; i < rows; ++i) {
      if (i == r || a[i][c].zero()) continue;
      const Q f = a[i][c];
      for (std::size_t j = c; j <= k; ++j) {
        auto prod = mulQ(f, a[r][j]);
        auto diff = prod ? subQ(a[i][j], *prod) : std::nullopt;
        if (!diff) return std::nullopt;
        a[i][j] = *diff;
      }
    }
  }
  for (std::size_t i = r; i < rows; ++i)
    if (!a[i][k].zero()) return std::nullopt;  // no law of these terms goes through every point
  std::vector<Q> x(k);
  for (std::size_t i = 0; i < k; ++i) x[i] = a[i][k];
  return x;
}

struct Candidate {
  std::vector<std::size_t> terms;  // indexes into the term list
  std::vector<Q> coefs;
  std::optional<Q> at_target;
  bool whole_and_positive = false;
};

std::optional<Q> lawValue(const std::vector<LawTerm>& terms, const std::vector<std::size_t>& use,
                          const std::vector<Q>& coefs, const Params& params) {
  Q sum{0, 1};
  for (std::size_t i = 0; i < use.size(); ++i) {
    auto v = termValue(terms[use[i]], params);
    auto prod = v ? mulQ(*v, coefs[i]) : std::nullopt;
    auto next = prod ? addQ(sum, *prod) : std::nullopt;
    if (!next) return std::nullopt;
    sum = *next;
  }
  return sum;
}

// Captures one could add: each input with one of world, seq, batch doubled or halved (world also
// one more), that no input already is.
std::vector<Params> nearbyCaptures(const std::vector<Input>& inputs) {
  std::vector<Params> out;
  const auto shape = [](const Params& p) {
    Params s;
    for (const char* k : kShape)
      if (auto v = param(p, k)) s[k] = *v;
    return s;
  };
  const auto known = [&](const Params& p) {
    return std::any_of(inputs.begin(), inputs.end(), [&](const Input& in) { return shape(in.params) == p; }) ||
           std::find(out.begin(), out.end(), p) != out.end();
  };
  for (const auto& in : inputs)
    for (const char* name : kShape) {
      auto v = param(in.params, name);
      if (!v) continue;
      std::vector<std::int64_t> values{*v * 2};
      if (*v % 2 == 0 && *v > 1) values.push_back(*v / 2);
      if (std::string_view(name) == "world") values.push_back(*v + 1);
      for (auto value : values) {
        Params p;  // world, seq and batch only: the other parameters are the program's, not a capture's size
        for (const char* k : kShape)
          if (auto kv = param(in.params, k)) p[k] = *kv;
        p[name] = value;
        if (checkParams(p).ok() && !known(p)) out.push_back(std::move(p));
      }
    }
  return out;
}

std::string lawText(const std::vector<LawTerm>& terms, const std::vector<std::size_t>& use) {
  std::string s;
  for (auto i : use) s += (s.empty() ? "" : " + ") + std::string("c*") + terms[i].name();
  return s;
}

Law toLaw(const std::vector<LawTerm>& terms, const Candidate& c) {
  Law law;
  law.kind = LawKind::kTerms;
  for (std::size_t i = 0; i < c.terms.size(); ++i) {
    law.terms.push_back(terms[c.terms[i]]);
    const auto& q = c.coefs[i];
    constexpr Int128 kMax = std::numeric_limits<std::int64_t>::max();
    if (q.n > kMax || q.n < -kMax || q.d > kMax) {
      law.kind = LawKind::kUnexplained;
      law.terms.clear(), law.coefs.clear();
      return law;
    }
    law.coefs.push_back({static_cast<std::int64_t>(q.n), static_cast<std::int64_t>(q.d)});
  }
  return law;
}

// Every law of `k` terms, `padded` of them padded shards, through the points.
std::vector<Candidate> lawsOfSize(const std::vector<LawTerm>& terms, const std::vector<std::vector<std::optional<Q>>>& rows,
                                  const std::vector<std::optional<Q>>& target_row, const std::vector<Distinct>& pts,
                                  std::size_t k, std::size_t padded) {
  std::vector<Candidate> out;
  std::vector<std::size_t> pick(k);
  const std::size_t m = terms.size();
  if (k > m) return out;
  for (std::size_t i = 0; i < k; ++i) pick[i] = i;
  while (true) {
    std::size_t n_padded = 0;
    for (auto i : pick) n_padded += terms[i].kind != LawTerm::Kind::kMonomial;
    bool usable = n_padded == padded;
    std::vector<std::vector<Q>> a;
    for (std::size_t r = 0; usable && r < pts.size(); ++r) {
      std::vector<Q> row;
      for (auto i : pick) {
        if (!rows[r][i]) {
          usable = false;
          break;
        }
        row.push_back(*rows[r][i]);
      }
      row.push_back(Q{pts[r].size, 1});
      a.push_back(std::move(row));
    }
    if (usable) {
      if (auto x = solve(std::move(a))) {
        Candidate c{pick, *x, std::nullopt, true};
        for (const auto& q : c.coefs) c.whole_and_positive = c.whole_and_positive && q.whole() && q.n >= 0;
        Q sum{0, 1};
        bool ok = true;
        for (std::size_t i = 0; i < k && ok; ++i) {
          auto prod = target_row[pick[i]] ? mulQ(*target_row[pick[i]], c.coefs[i]) : std::nullopt;
          auto next = prod ? addQ(sum, *prod) : std::nullopt;
          ok = next.has_value();
          if (ok) sum = *next;
        }
        if (ok) c.at_target = sum;
        out.push_back(std::move(c));
      }
    }
    std::size_t i = k;  // next combination
    while (i > 0 && pick[i - 1] == m - k + i - 1) --i;
    if (i == 0) break;
    ++pick[i - 1];
    for (std::size_t j = i; j < k; ++j) pick[j] = pick[j - 1] + 1;
  }
  return out;
}

}  // namespace

std::optional<Q> termValue(const LawTerm& t, const Params& p) {
  const auto w = param(p, "world");
  if (t.kind != LawTerm::Kind::kMonomial) {
    if (!w || *w < 1) return std::nullopt;
    const Int128 rows = (Int128{t.dim0} + *w - 1) / *w;
    return t.kind == LawTerm::Kind::kShard ? Q{rows, 1} : Q{rows * *w, 1};
  }
  Q q{1, 1};
  const auto times = [&](std::optional<std::int64_t> v, int e) {
    if (e == 0) return true;
    if (!v) return false;
    auto f = power(*v, e);
    auto next = f ? mulQ(q, *f) : std::nullopt;
    if (next) q = *next;
    return next.has_value();
  };
  const auto seq = param(p, "seq"), batch = param(p, "batch");
  std::optional<std::int64_t> tokens;
  if (seq) {
    std::int64_t v = 0;
    if (!__builtin_mul_overflow(*seq, batch.value_or(1), &v)) tokens = v;
  }
  if (!times(tokens, t.tokens) || !times(seq, t.seq) || !times(batch, t.batch) || !times(w, std::max<int>(t.world, 0)))
    return std::nullopt;
  if (t.world < 0) {
    if (!w || *w < 1) return std::nullopt;
    return divQ(q, Q{*w, 1});
  }
  return q;
}

bool severalParametersVary(const std::vector<Point>& points) {
  const auto varies = [&](const char* name) {
    std::set<std::optional<std::int64_t>> seen;
    for (const auto& p : points) seen.insert(param(*p.params, name));
    return seen.size() > 1;
  };
  // seq and batch count as one (today's laws take their product, tokens, as one variable)
  return varies("world") && (varies("seq") || varies("batch"));
}

std::vector<std::int64_t> paddedDims(const std::vector<Point>& points) {
  std::map<std::int64_t, std::int64_t> by_world;  // depends on world alone, or no dims from it
  for (const auto& p : points) {
    auto w = param(*p.params, "world");
    if (!w || *w < 1) return {};
    auto [it, fresh] = by_world.emplace(*w, p.size);
    if (!fresh && it->second != p.size) return {};
  }
  if (by_world.size() < 3) return {};
  const std::vector<std::pair<std::int64_t, std::int64_t>> pts(by_world.begin(), by_world.end());
  std::set<std::int64_t> dims;
  for (std::size_t i = 0; i < pts.size(); ++i)
    for (std::size_t j = i + 1; j < pts.size(); ++j) {
      // c + K/W through points i and j (world divides dim 0 there).
      const Int128 wi = pts[i].first, wj = pts[j].first, si = pts[i].second, sj = pts[j].second;
      const Int128 num = (si - sj) * wi * wj, den = wj - wi;
      if (den == 0 || num % den != 0) continue;
      const Int128 k = num / den;
      if (k <= 0 || (si * wi - k) % wi != 0) continue;
      const Int128 c = (si * wi - k) / wi;
      bool plain = true;
      for (const auto& [w, s] : pts) plain = plain && (s - c) * w == k;
      if (plain) return {};  // no padding at the inputs: nothing to learn about dim 0 here
      for (const auto& [w, s] : pts) {
        const Int128 e = (s - c) * w - k;  // = r * pad, pad = (-dim0) mod w
        if (e <= 0) continue;
        for (Int128 pad = 1; pad < w && pad <= 4096; ++pad) {
          if ((k * pad) % e != 0) continue;
          const Int128 d = k * pad / e;
          if (d <= 0 || k % d != 0) continue;
          const Int128 r = k / d;
          bool fits = true;
          for (const auto& [w2, s2] : pts) fits = fits && c + r * ((d + w2 - 1) / w2) == s2;
          if (fits) dims.insert(static_cast<std::int64_t>(d));
        }
        break;  // one padded point proposes; the others verify
      }
    }
  return {dims.begin(), dims.end()};
}

std::vector<LawTerm> lawTerms(const std::vector<Input>& inputs, const std::vector<std::int64_t>& dims) {
  const auto all = [&](const char* name) {
    return !inputs.empty() &&
           std::all_of(inputs.begin(), inputs.end(), [&](const Input& in) { return in.params.count(name) > 0; });
  };
  const bool world = all("world"), seq = all("seq"), batch = all("batch");
  std::vector<LawTerm> t;
  const auto mono = [&](int tokens, int s, int b, int w) {
    LawTerm term;
    term.tokens = static_cast<std::int8_t>(tokens), term.seq = static_cast<std::int8_t>(s);
    term.batch = static_cast<std::int8_t>(b), term.world = static_cast<std::int8_t>(w);
    t.push_back(term);
  };
  mono(0, 0, 0, 0);
  if (seq) mono(1, 0, 0, 0);
  if (seq && batch) mono(0, 1, 0, 0), mono(0, 0, 1, 0);
  if (world) mono(0, 0, 0, -1);
  if (world && seq) mono(1, 0, 0, -1);
  if (world && seq && batch) mono(0, 1, 0, -1), mono(0, 0, 1, -1);
  // No world^1 term: FSDP2 grows a rank's memory with world only through the padded all-gather
  // output (world*ceil(dim0/world) below); a free world term would fit any two worlds.
  if (seq) mono(1, 1, 0, 0);  // attention scores: batch x seq^2
  if (world)
    for (auto d : dims) {
      LawTerm shard;
      shard.kind = LawTerm::Kind::kShard, shard.dim0 = d;
      t.push_back(shard);
      LawTerm gathered = shard;
      gathered.kind = LawTerm::Kind::kGathered;
      t.push_back(gathered);
    }
  return t;
}

Law fitTerms(const std::vector<Point>& points, const std::vector<LawTerm>& terms, const Params& target,
             const std::vector<Input>& inputs) {
  Law law;
  law.kind = LawKind::kUnexplained;
  auto pts = distinctPoints(points);
  if (!pts) {
    law.determined = false;
    law.why_undetermined = "the same parameters give different sizes in two inputs";
    return law;
  }
  std::vector<std::vector<std::optional<Q>>> rows;
  for (const auto& p : *pts) {
    rows.emplace_back();
    for (const auto& t : terms) rows.back().push_back(termValue(t, *p.params));
  }
  std::vector<std::optional<Q>> target_row;
  for (const auto& t : terms) target_row.push_back(termValue(t, target));
  const auto captures = nearbyCaptures(inputs);
  for (std::size_t k = 1; k < pts->size(); ++k)
    for (std::size_t padded = 0; padded <= k; ++padded) {
      auto found = lawsOfSize(terms, rows, target_row, *pts, k, padded);
      if (found.empty()) continue;
      if (std::any_of(found.begin(), found.end(), [](const Candidate& c) { return c.whole_and_positive; }))
        std::erase_if(found, [](const Candidate& c) { return !c.whole_and_positive; });
      law = toLaw(terms, found[0]);
      const Candidate* other = nullptr;
      for (const auto& c : found)
        if (!c.at_target || !found[0].at_target || !equalQ(*c.at_target, *found[0].at_target)) {
          other = &c;
          break;
        }
      if (!other && found[0].at_target && !found[0].at_target->whole()) {
        law.determined = false;  // FSDP2 pads dim 0 at the target's world, which no input shows
        law.why_undetermined = fmt::format(
            "{} gives a fraction of a byte at the target, so the inputs do not pin its size there (where world does "
            "not divide a dim 0, FSDP2 pads it, and no input shows that padding)",
            lawText(terms, found[0].terms));
        for (const auto& p : captures) {
          auto v = lawValue(terms, found[0].terms, found[0].coefs, p);
          if (v && !v->whole()) {
            law.add_capture = p;
            break;
          }
        }
        return law;
      }
      if (!other) return law;
      law.determined = false;
      law.why_undetermined = fmt::format("{} and {} both go through every input and differ at the target",
                                         lawText(terms, found[0].terms), lawText(terms, other->terms));
      for (const auto& p : captures) {
        auto a = lawValue(terms, found[0].terms, found[0].coefs, p);
        auto b = lawValue(terms, other->terms, other->coefs, p);
        if (a && b && !equalQ(*a, *b)) {
          law.add_capture = p;
          break;
        }
      }
      return law;
    }
  law.determined = false;
  law.why_undetermined =
      fmt::format("no law of fewer terms than the {} inputs goes through them: one more capture is needed", pts->size());
  if (!captures.empty()) law.add_capture = captures.front();
  return law;
}

}  // namespace detail
}  // namespace reservoir::replay::scale
