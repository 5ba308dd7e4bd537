// The free-block lookup: the allocator model's free list (OrderedSet, a flat two-level B+
// tree) against std::set, the structure PyTorch itself uses (BlockPool::blocks), on the
// operation mix of a replay: lower_bound for a request, erase of the found block, insert of
// the split remainder and of freed blocks. state.range(0) = blocks in the free list.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "allocator_impl.h"
#include "ordered_set.h"

namespace {

using reservoir::sim::OrderedSet;
using reservoir::sim::SizeKey;

std::vector<SizeKey> makeKeys(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<SizeKey> keys(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t size = 512ull << (rng() % 16);
    keys[i] = SizeKey{rng() % 2, size + (rng() % 64) * 512, 0x7f0000000000ull + i * 0x200000ull,
                      static_cast<std::uint32_t>(i)};
  }
  return keys;
}

template <typename Set>
void churn(benchmark::State& state, Set& set, const std::vector<SizeKey>& keys) {
  std::mt19937_64 rng(7);
  std::size_t ops = 0;
  for (auto _ : state) {
    // A request: the first block of its stream at least as large; take it, put back a remainder.
    const SizeKey& probe = keys[rng() % keys.size()];
    auto it = set.lower_bound(SizeKey{probe.stream, probe.size, 0, 0});
    if (it != set.end()) {
      const SizeKey found = *it;
      set.erase(it);
      set.insert(SizeKey{found.stream, found.size, found.ptr, found.ref});  // freed again
    }
    ++ops;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(ops));
}

struct StdSetAdapter {
  std::set<SizeKey> s;
  auto lower_bound(const SizeKey& k) { return s.lower_bound(k); }
  auto end() { return s.end(); }
  void erase(std::set<SizeKey>::iterator it) { s.erase(it); }
  void insert(const SizeKey& k) { s.insert(k); }
};

struct OrderedSetAdapter {
  OrderedSet<SizeKey> s;
  struct It {
    const OrderedSet<SizeKey>* s;
    OrderedSet<SizeKey>::Cursor c;
    const SizeKey& operator*() const { return s->at(c); }
    bool operator!=(const It& o) const { return !(c == o.c); }
  };
  It lower_bound(const SizeKey& k) { return {&s, s.lowerBound(k)}; }
  It end() { return {&s, s.end()}; }
  void erase(const It& it) { s.erase(it.c); }
  void insert(const SizeKey& k) { s.insert(k); }
};

void BM_FreeList_StdSet(benchmark::State& state) {
  const auto keys = makeKeys(static_cast<std::size_t>(state.range(0)), 1);
  StdSetAdapter set;
  for (const auto& k : keys) set.insert(k);
  churn(state, set, keys);
}
BENCHMARK(BM_FreeList_StdSet)->Arg(64)->Arg(1024)->Arg(16384);

void BM_FreeList_OrderedSet(benchmark::State& state) {
  const auto keys = makeKeys(static_cast<std::size_t>(state.range(0)), 1);
  OrderedSetAdapter set;
  for (const auto& k : keys) set.insert(k);
  churn(state, set, keys);
}
BENCHMARK(BM_FreeList_OrderedSet)->Arg(64)->Arg(1024)->Arg(16384);

}  // namespace

BENCHMARK_MAIN();
