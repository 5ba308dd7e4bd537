#include "conformance/released_pools.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

namespace reservoir::replay::detail {
namespace {

using traces::Action;
using traces::PoolId;

// Rounds of learning from the segments decided in the round before (a chain of released segments
// each named only by the one before it, longer than this, stays default).
constexpr int kRounds = 8;

// One cudaMalloc'd segment's life in the window: [from, to) in events.
struct Lifetime {
  Addr begin = 0, end = 0;
  traces::StreamValue stream = 0;
  std::size_t from = 0, to = 0;
  std::optional<PoolId> pool;  // known: from the final segments or the window's start
  bool framed = false;         // an allocation in it has Python or C++ frames
};

// Every non-expandable segment's lifetime, in the order they began: the window's start state,
// then each segment_alloc until the segment_free at its address (or the end). A lifetime still
// open at the end whose address is a final segment's has that segment's pool.
struct Lifetimes {
  std::vector<Lifetime> all;  // the window's start segments first, then one per segment_alloc
  std::size_t from_start = 0;
};

Lifetimes lifetimes(const traces::Snapshot& snap, const traces::DeviceTrace& trace, const traces::WindowStart& start) {
  Lifetimes result;
  std::vector<Lifetime>& out = result.all;
  std::map<Addr, std::size_t> open;
  const std::size_t n = trace.events.size();
  for (const traces::StartSegment& s : start.segments) {
    if (s.is_expandable) continue;
    open[s.addr] = out.size();
    out.push_back(Lifetime{s.addr, s.addr + s.size, s.stream, 0, n, s.pool, false});
  }
  result.from_start = out.size();
  for (std::size_t k = 0; k < n; ++k) {
    const traces::TraceEvent& e = trace.events[k];
    if (e.action == Action::kSegmentAlloc) {
      open[e.addr] = out.size();
      out.push_back(Lifetime{e.addr, e.addr + e.size, snap.stream(e), k, n, std::nullopt, false});
    } else if (e.action == Action::kSegmentFree) {
      if (const auto it = open.find(e.addr); it != open.end()) {
        out[it->second].to = k;
        open.erase(it);
      }
    }
  }
  for (const traces::SegmentInfo& s : snap.segments) {
    if (s.device != trace.device || s.is_expandable) continue;
    if (const auto it = open.find(s.address); it != open.end() && !out[it->second].pool)
      out[it->second].pool = s.pool;
  }
  return result;
}

// The lifetime each allocation landed in (by address, among those live then), as a callback.
template <typename F>
void forEachLanding(const traces::DeviceTrace& trace, const Lifetimes& lifetimes, F&& f) {
  const std::vector<Lifetime>& lives = lifetimes.all;
  std::map<Addr, std::size_t> live;  // by begin
  std::size_t next = 0;
  for (; next < lifetimes.from_start; ++next) live[lives[next].begin] = next;
  for (std::size_t k = 0; k < trace.events.size(); ++k) {
    const traces::TraceEvent& e = trace.events[k];
    if (e.action == Action::kSegmentAlloc && next < lives.size()) {
      live[lives[next].begin] = next;
      ++next;
    }
    if (e.action == Action::kSegmentFree) live.erase(e.addr);
    if (e.action != Action::kAlloc) continue;
    auto it = live.upper_bound(e.addr);
    if (it == live.begin()) continue;
    --it;
    if (e.addr < lives[it->second].end) f(e, it->second);
  }
}

// The pools a stack's allocations landed in, as far as a vote needs: one, or several.
struct StackPools {
  PoolId pool;
  bool any = false, several = false;
  void add(const PoolId& p) {
    several = several || (any && p != pool);
    pool = p;
    any = true;
  }
};

// The pools a key was seen in: one private pool alone decides.
template <typename Key>
std::optional<PoolId> solePrivate(const std::map<Key, std::set<PoolId>>& seen, const Key& key) {
  const auto it = seen.find(key);
  if (it == seen.end() || it->second.size() != 1 || it->second.begin()->isDefault()) return std::nullopt;
  return *it->second.begin();
}

}  // namespace

std::vector<PoolRange> releasedPoolRanges(const traces::Snapshot& snap, const traces::DeviceTrace& trace,
                                          const traces::WindowStart& start, std::span<const PoolSeed> seeds) {
  Lifetimes found = lifetimes(snap, trace, start);
  std::vector<Lifetime>& lives = found.all;
  std::vector<bool> seeded(lives.size(), false);
  for (const PoolSeed& seed : seeds)
    for (std::size_t i = found.from_start; i < lives.size(); ++i)
      if (lives[i].from == seed.segment_event && !lives[i].pool) {
        lives[i].pool = seed.pool;
        seeded[i] = true;
      }
  bool any_private = false;
  std::map<traces::StreamValue, std::set<PoolId>> stream_pools;
  for (const Lifetime& l : lives)
    if (l.pool) {
      stream_pools[l.stream].insert(*l.pool);
      any_private = any_private || !l.pool->isDefault();
    }
  std::vector<PoolRange> out;
  if (!any_private) return out;
  // The framed allocations, each with the segment it landed in, grouped by segment (one pass).
  std::vector<std::pair<std::uint32_t, StackId>> landings;  // (lifetime, stack)
  forEachLanding(trace, found, [&](const traces::TraceEvent& e, std::size_t life) {
    if (!e.stack.valid() || snap.stack(e.stack).empty()) return;
    lives[life].framed = true;
    landings.emplace_back(static_cast<std::uint32_t>(life), e.stack);
  });
  std::stable_sort(landings.begin(), landings.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::size_t> first_landing(lives.size() + 1, landings.size());
  for (std::size_t i = landings.size(); i-- > 0;) first_landing[landings[i].first] = i;
  for (std::size_t i = lives.size(); i-- > 0;) first_landing[i] = std::min(first_landing[i], first_landing[i + 1]);
  // What each stack's allocations in segments of a known pool say: the one pool, or several.
  std::unordered_map<std::uint32_t, StackPools> stack_pools;
  auto learn = [&](std::size_t life) {
    for (std::size_t i = first_landing[life]; i < first_landing[life + 1]; ++i)
      stack_pools[landings[i].second.value()].add(*lives[life].pool);
  };
  for (std::size_t i = 0; i < lives.size(); ++i)
    if (lives[i].pool) learn(i);
  // A segment whose pool is not known: the one pool its allocations' stacks name, if they agree.
  // Decided so, it is known in the next round.
  std::vector<bool> by_stack(lives.size(), false);
  for (int round = 0; round < kRounds; ++round) {
    std::vector<std::size_t> decided;
    for (std::size_t life = 0; life < lives.size(); ++life) {
      if (lives[life].pool) continue;
      std::optional<PoolId> vote;
      bool split = false;
      for (std::size_t i = first_landing[life]; i < first_landing[life + 1] && !split; ++i) {
        const auto it = stack_pools.find(landings[i].second.value());
        if (it == stack_pools.end() || it->second.several) continue;
        split = vote && *vote != it->second.pool;
        vote = it->second.pool;
      }
      if (vote && !split) {
        lives[life].pool = vote;
        by_stack[life] = true;
        decided.push_back(life);
      }
    }
    if (decided.empty()) break;
    for (std::size_t life : decided) learn(life);
  }
  for (std::size_t i = 0; i < lives.size(); ++i) {
    const Lifetime& l = lives[i];
    std::optional<PoolId> pool = by_stack[i] || seeded[i] ? l.pool : std::nullopt;
    // No frames to go by: its stream's pool, in a trace recorded with stacks (without them the
    // generator state capture_begin allocates on the capture stream looks like the capture's own).
    const bool by_stream = !l.pool && !l.framed && !landings.empty();
    if (by_stream) pool = solePrivate(stream_pools, l.stream);
    if (pool && !pool->isDefault()) out.push_back(PoolRange{l.begin, l.end, l.from, *pool, l.to, by_stream});
  }
  return out;
}

std::optional<PoolSeed> inferredPoolSeed(const traces::Snapshot& snap, const traces::DeviceTrace& trace, std::size_t at,
                                         const sim::SimEvent& simulated, std::span<const PoolSeed> seeds) {
  const auto& events = trace.events;
  if (at >= events.size() || simulated.action != Action::kAlloc) return std::nullopt;
  const traces::TraceEvent& made = events[at];
  if (made.action != Action::kSegmentAlloc) return std::nullopt;
  // Given back before the snapshot (a segment the dump still holds would name its pool).
  const auto freedAfter = [&](std::size_t from, Addr addr) {
    for (std::size_t k = from + 1; k < events.size(); ++k)
      if (events[k].action == Action::kSegmentFree && events[k].addr == addr) return k;
    return events.size();
  };
  if (freedAfter(at, made.addr) == events.size()) return std::nullopt;
  for (const PoolSeed& s : seeds)
    if (s.segment_event == at) return std::nullopt;  // seeded already: the seed did not explain it
  for (auto it = seeds.rbegin(); it != seeds.rend(); ++it) {
    const traces::TraceEvent& earlier = events[it->segment_event];
    if (snap.stream(earlier) == snap.stream(made) && freedAfter(it->segment_event, earlier.addr) > at)
      return PoolSeed{at, it->pool};
  }
  std::int64_t next = 1;
  for (const PoolSeed& s : seeds) next = std::max(next, s.pool.second + 1);
  return PoolSeed{at, PoolId{-1, next}};
}

std::vector<PoolRange> namedPoolRanges(const traces::Snapshot& snap, const traces::DeviceTrace& trace,
                                               const traces::WindowStart& start) {
  const Lifetimes found = lifetimes(snap, trace, start);
  const std::vector<Lifetime>& lives = found.all;
  std::vector<std::optional<PoolId>> named(lives.size());
  forEachLanding(trace, found, [&](const traces::TraceEvent& e, std::size_t life) {
    if (const traces::EventExtra& x = snap.extra(e); x.has_pool && !named[life]) named[life] = x.pool;
  });
  std::vector<PoolRange> out;
  for (std::size_t i = 0; i < lives.size(); ++i) {
    const Lifetime& l = lives[i];
    if (l.to < trace.events.size() && named[i] && !named[i]->isDefault())
      out.push_back(PoolRange{l.begin, l.end, l.from, *named[i], l.to, false});
  }
  return out;
}

}  // namespace reservoir::replay::detail
