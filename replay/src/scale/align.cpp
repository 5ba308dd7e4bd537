// Aligning two request streams: Myers' O(ND) difference algorithm on request keys, after
// the common prefix and suffix (the whole stream when two runs issue the same requests).
#include <fmt/format.h>

#include "reservoir/replay/scale.h"

namespace reservoir::replay::scale {
namespace {

using Index = std::int64_t;

// Myers' forward search; the V arrays of every step are kept (as [-d, d] slices) to walk back.
Expected<std::vector<std::vector<Index>>> myersSearch(const std::uint64_t* a, Index n, const std::uint64_t* b, Index m,
                                                      std::size_t max_distance) {
  const Index max_d = std::min<Index>(n + m, static_cast<Index>(max_distance));
  std::vector<Index> v(static_cast<std::size_t>(2 * max_d + 3), 0);
  const Index off = max_d + 1;
  std::vector<std::vector<Index>> history;
  for (Index d = 0; d <= max_d; ++d) {
    for (Index k = -d; k <= d; k += 2) {
      const auto at = [&](Index kk) -> Index& { return v[static_cast<std::size_t>(kk + off)]; };
      Index x = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? at(k + 1) : at(k - 1) + 1;
      Index y = x - k;
      while (x < n && y < m && a[x] == b[y]) ++x, ++y;
      at(k) = x;
      if (x >= n && y >= m) {
        history.emplace_back(v.begin() + (off - d), v.begin() + (off + d + 1));
        return history;
      }
    }
    history.emplace_back(v.begin() + (off - d), v.begin() + (off + d + 1));
  }
  return Status::error(
      fmt::format("the request streams differ in more than {} requests (of {} and {}): not the same "
                  "program",
                  max_distance, n, m));
}

}  // namespace

Expected<std::vector<std::int64_t>> alignSequences(const std::vector<std::uint64_t>& a,
                                                   const std::vector<std::uint64_t>& b, std::size_t max_distance) {
  std::vector<std::int64_t> match(a.size(), -1);
  std::size_t pre = 0;
  while (pre < a.size() && pre < b.size() && a[pre] == b[pre]) match[pre] = static_cast<std::int64_t>(pre), ++pre;
  std::size_t suf = 0;
  while (suf < a.size() - pre && suf < b.size() - pre && a[a.size() - 1 - suf] == b[b.size() - 1 - suf]) {
    match[a.size() - 1 - suf] = static_cast<std::int64_t>(b.size() - 1 - suf);
    ++suf;
  }
  const Index n = static_cast<Index>(a.size() - pre - suf), m = static_cast<Index>(b.size() - pre - suf);
  if (n == 0 || m == 0) return match;
  auto hist = myersSearch(a.data() + pre, n, b.data() + pre, m, max_distance);
  if (!hist) return hist.status();
  const auto& h = *hist;
  const auto base = static_cast<Index>(pre);
  Index x = n, y = m;
  for (Index d = static_cast<Index>(h.size()) - 1; d > 0; --d) {
    const auto& prev = h[static_cast<std::size_t>(d - 1)];  // k in [-(d-1), d-1] at index k + d - 1
    const auto vp = [&](Index kk) { return prev[static_cast<std::size_t>(kk + d - 1)]; };
    const Index k = x - y;
    const Index pk = (k == -d || (k != d && vp(k - 1) < vp(k + 1))) ? k + 1 : k - 1;
    const Index px = vp(pk), py = px - pk;
    while (x > px && y > py) --x, --y, match[static_cast<std::size_t>(base + x)] = base + y;
    x = px, y = py;
  }
  while (x > 0 && y > 0) --x, --y, match[static_cast<std::size_t>(base + x)] = base + y;
  return match;
}

}  // namespace reservoir::replay::scale
