// OrderedSet (the free lists' sorted set) against std::set: random inserts, erases, finds and
// replaces with small leaves, so splits, emptied leaves and replaces across leaves all happen.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "ordered_set.h"

namespace {

struct Key {
  int value;
  int payload;  // not part of the order: a replace by an equal key must store the new one
  bool operator<(const Key& o) const { return value < o.value; }
};

using Small = reservoir::sim::OrderedSet<Key, 4>;

std::vector<Key> contents(const Small& s) {
  std::vector<Key> out;
  s.forEach([&](const Key& k) { out.push_back(k); });
  return out;
}

void expectSame(const Small& s, const std::set<Key>& ref) {
  ASSERT_EQ(s.size(), ref.size());
  const auto got = contents(s);
  std::size_t i = 0;
  for (const Key& k : ref) {
    ASSERT_EQ(got[i].value, k.value) << "at " << i;
    ASSERT_EQ(got[i].payload, k.payload) << "at " << i;
    ++i;
  }
}

// The n-th key of the set and its cursor.
Small::Cursor nth(const Small& s, std::size_t n) {
  auto c = s.begin();
  for (std::size_t i = 0; i < n; ++i) s.next(c);
  return c;
}

TEST(OrderedSet, ReplaceFindInsertEraseMatchStdSet) {
  std::mt19937 rng(7);
  Small s;
  std::set<Key> ref;
  for (int step = 0; step < 20000; ++step) {
    const int v = static_cast<int>(rng() % 200);
    const int payload = step;
    switch (rng() % 4) {
      case 0: EXPECT_EQ(s.insert(Key{v, payload}), ref.insert(Key{v, payload}).second); break;
      case 1: EXPECT_EQ(s.erase(Key{v, 0}), ref.erase(Key{v, 0})); break;
      case 2: {
        const auto c = s.find(Key{v, 0});
        if (ref.count(Key{v, 0})) {
          ASSERT_NE(c, s.end());
          EXPECT_EQ(s.at(c).value, v);
        } else {
          EXPECT_EQ(c, s.end());
        }
        break;
      }
      default: {
        if (ref.empty()) break;
        const std::size_t n = rng() % ref.size();
        const Key old = *std::next(ref.begin(), static_cast<std::ptrdiff_t>(n));
        ASSERT_EQ(s.at(nth(s, n)).value, old.value);
        // erase then insert, as replace promises: refused (and the old key gone) on an equal key
        ref.erase(old);
        const bool inserted = ref.insert(Key{v, payload}).second;
        EXPECT_EQ(s.replace(nth(s, n), Key{v, payload}), inserted) << "step " << step;
      }
    }
    expectSame(s, ref);
  }
}

// lowerBound against std::set::lower_bound on sets of 3 to 300 leaves: the leaf search scans a
// few leaves' last keys and halves the range above that, the key search scans within a leaf.
TEST(OrderedSet, LowerBoundMatchesStdSetOverFewAndManyLeaves) {
  std::mt19937 rng(11);
  for (int keys : {10, 100, 1200}) {
    Small s;
    std::set<Key> ref;
    while (static_cast<int>(ref.size()) < keys) {
      const int v = 2 * static_cast<int>(rng() % 5000);  // even values: odd probes fall between keys
      s.insert(Key{v, 0});
      ref.insert(Key{v, 0});
    }
    expectSame(s, ref);
    for (int probe = -1; probe <= 10001; ++probe) {
      const auto want = ref.lower_bound(Key{probe, 0});
      const auto got = s.lowerBound(Key{probe, 0});
      if (want == ref.end()) {
        ASSERT_EQ(got, s.end()) << "probe " << probe << " of " << keys;
      } else {
        ASSERT_NE(got, s.end()) << "probe " << probe << " of " << keys;
        ASSERT_EQ(s.at(got).value, want->value) << "probe " << probe << " of " << keys;
      }
    }
  }
}

TEST(OrderedSet, ReplaceByAnEqualKeyStoresTheNewKey) {
  Small s;
  for (int v = 0; v < 10; ++v) s.insert(Key{v, 0});
  EXPECT_TRUE(s.replace(s.find(Key{5, 0}), Key{5, 42}));
  EXPECT_EQ(s.at(s.find(Key{5, 0})).payload, 42);
  EXPECT_EQ(s.size(), 10u);
}

TEST(OrderedSet, ACopyIsDeep) {
  Small s;
  for (int v = 0; v < 40; ++v) s.insert(Key{v, v});
  Small copy(s);
  s.erase(Key{3, 0});
  EXPECT_EQ(copy.size(), 40u);
  EXPECT_NE(copy.find(Key{3, 0}), copy.end());
  EXPECT_EQ(contents(copy).back().payload, 39);
}

}  // namespace
