#include "conformance/released_pools.h"

#include <map>
#include <optional>
#include <set>

namespace reservoir::replay::detail {
namespace {

using traces::Action;
using traces::PoolId;

// Rounds of learning from the segments decided in the round before (each round is two passes
// over the events; a chain of released segments longer than this stays default).
constexpr int kRounds = 8;

// One cudaMalloc'd segment's life in the window: [from, to) in events.
struct Lifetime {
  Addr begin = 0, end = 0;
  traces::StreamValue stream = 0;
  std::size_t from = 0, to = 0;
  std::optional<PoolId> pool;  // known: from the final segments or the window's start
  std::set<PoolId> votes;      // unknown: the pools its allocations' stacks allocated in alone
  bool framed = false;         // unknown: an allocation in it has Python or C++ frames
};

// Every non-expandable segment's lifetime, in the order they began: the window's start state,
// then each segment_alloc until the segment_free at its address (or the end). A lifetime still
// open at the end whose address is a final segment's has that segment's pool.
std::vector<Lifetime> lifetimes(const traces::Snapshot& snap, const traces::DeviceTrace& trace,
                                const traces::WindowStart& start) {
  std::vector<Lifetime> out;
  std::map<Addr, std::size_t> open;
  const std::size_t n = trace.events.size();
  for (const traces::StartSegment& s : start.segments) {
    if (s.is_expandable) continue;
    open[s.addr] = out.size();
    out.push_back(Lifetime{s.addr, s.addr + s.size, s.stream, 0, n, s.pool, {}, false});
  }
  for (std::size_t k = 0; k < n; ++k) {
    const traces::TraceEvent& e = trace.events[k];
    if (e.action == Action::kSegmentAlloc) {
      open[e.addr] = out.size();
      out.push_back(Lifetime{e.addr, e.addr + e.size, e.stream, k, n, std::nullopt, {}, false});
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
  return out;
}

// The lifetime each allocation landed in (by address, among those live then), as a callback.
// `lives` holds the window's start segments first (`from_start` of them), then one lifetime per
// segment_alloc in event order.
template <typename F>
void forEachLanding(const traces::DeviceTrace& trace, std::vector<Lifetime>& lives, std::size_t from_start, F&& f) {
  std::map<Addr, std::size_t> live;  // by begin
  std::size_t next = 0;
  for (; next < from_start; ++next) live[lives[next].begin] = next;
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
    if (e.addr < lives[it->second].end) f(k, e, lives[it->second]);
  }
}

// The pools a key was seen in: one private pool alone decides.
template <typename Key>
std::optional<PoolId> solePrivate(const std::map<Key, std::set<PoolId>>& seen, const Key& key) {
  const auto it = seen.find(key);
  if (it == seen.end() || it->second.size() != 1 || it->second.begin()->isDefault()) return std::nullopt;
  return *it->second.begin();
}

}  // namespace

std::vector<ReleasedPoolRange> releasedPoolRanges(const traces::Snapshot& snap, const traces::DeviceTrace& trace,
                                                  const traces::WindowStart& start) {
  std::vector<Lifetime> lives = lifetimes(snap, trace, start);
  std::size_t from_start = 0;
  for (const traces::StartSegment& s : start.segments) from_start += !s.is_expandable;
  bool any_private = false;
  std::map<traces::StreamValue, std::set<PoolId>> stream_pools;
  for (const Lifetime& l : lives)
    if (l.pool) {
      stream_pools[l.stream].insert(*l.pool);
      any_private = any_private || !l.pool->isDefault();
    }
  std::vector<ReleasedPoolRange> out;
  if (!any_private) return out;
  // What the segments whose pool is known say of each stack (the pools its allocations landed
  // in), then the pools an unknown segment's allocations' stacks name; a segment they name
  // unanimously is known from then on, and what its allocations say counts in the next round.
  auto framed = [&](const traces::TraceEvent& e) { return e.stack.valid() && !snap.stack(e.stack).empty(); };
  std::vector<bool> by_stack(lives.size(), false);
  for (int round = 0; round < kRounds; ++round) {
    std::map<StackId, std::set<PoolId>> stack_pools;
    forEachLanding(trace, lives, from_start, [&](std::size_t, const traces::TraceEvent& e, Lifetime& l) {
      if (l.pool && framed(e)) stack_pools[e.stack].insert(*l.pool);
    });
    for (Lifetime& l : lives) l.votes.clear();
    forEachLanding(trace, lives, from_start, [&](std::size_t, const traces::TraceEvent& e, Lifetime& l) {
      if (l.pool || !framed(e)) return;
      l.framed = true;
      const auto it = stack_pools.find(e.stack);
      if (it != stack_pools.end() && it->second.size() == 1) l.votes.insert(*it->second.begin());
    });
    bool changed = false;
    for (std::size_t i = 0; i < lives.size(); ++i)
      if (!lives[i].pool && lives[i].votes.size() == 1) {
        lives[i].pool = *lives[i].votes.begin();
        by_stack[i] = changed = true;
      }
    if (!changed) break;
  }
  for (std::size_t i = 0; i < lives.size(); ++i) {
    const Lifetime& l = lives[i];
    std::optional<PoolId> pool = by_stack[i] ? l.pool : std::nullopt;
    const bool by_stream = !l.pool && !l.framed;  // no frames to go by: its stream's pool
    if (by_stream) pool = solePrivate(stream_pools, l.stream);
    if (pool && !pool->isDefault()) out.push_back(ReleasedPoolRange{l.begin, l.end, l.from, l.to, *pool, by_stream});
  }
  return out;
}

}  // namespace reservoir::replay::detail
