// A periodic run's state compared with its copy one period earlier, and advanced by whole
// periods (repeat.h).
#include <algorithm>

#include "allocator_impl.h"

namespace reservoir::sim {
namespace {

using Impl = CachingAllocator::Impl;

// The live blocks by address (no two share one on the default pools).
std::vector<BlockRef> liveByAddress(const Impl& m) {
  std::vector<BlockRef> out;
  for (BlockRef b = 0; b < m.arena.size(); ++b)
    if (m.arena[b].live) out.push_back(b);
  std::sort(out.begin(), out.end(), [&](BlockRef a, BlockRef b) { return m.arena[a].ptr < m.arena[b].ptr; });
  return out;
}

// What the comparison supports: the default pools, nothing captured, no expandable segments, no
// garbage collection (its ages count calls), no invariant broken.
bool comparable(const Impl& m) {
  return m.pools.size() == 2 && m.private_pools.empty() && m.pool_index.empty() && m.pools_freeable.empty() &&
         m.captures_underway.empty() && m.use_on_oom_pools.empty() && m.segments_es.empty() &&
         m.deferred_blocks.empty() && m.invariant_failure.empty() && m.config.garbage_collection_threshold <= 0.0;
}

// The tag of an allocation one period later: the same allocation's, or one period's further on.
bool tagStep(std::uint64_t now, std::uint64_t earlier, std::uint64_t step, std::int64_t& out) {
  if (now != earlier && now != earlier + step) return false;
  out = static_cast<std::int64_t>(now - earlier);
  return true;
}

bool sameBlock(const Block& n, const Block& e, const std::vector<std::uint32_t>& rank_n,
               const std::vector<std::uint32_t>& rank_e) {
  auto same_link = [&](BlockRef a, BlockRef b) {
    return (a == kNil && b == kNil) || (a != kNil && b != kNil && rank_n[a] == rank_e[b]);
  };
  return n.stream == e.stream && n.size == e.size && n.requested_size == e.requested_size && n.pool == e.pool &&
         n.expandable == kNil && e.expandable == kNil && n.event_count == e.event_count && n.allocated == e.allocated &&
         n.mapped == e.mapped && n.stream_uses == e.stream_uses && same_link(n.prev, e.prev) &&
         same_link(n.next, e.next);
}

bool pairBlocks(const Impl& now, const Impl& earlier, const RepeatRules& rules, Repeat& r) {
  const auto ln = liveByAddress(now), le = liveByAddress(earlier);
  if (ln.size() != le.size()) return false;
  std::vector<std::uint32_t> rank_n(now.arena.size(), ~0u), rank_e(earlier.arena.size(), ~0u);
  for (std::uint32_t i = 0; i < ln.size(); ++i) {
    rank_n[ln[i]] = i;
    rank_e[le[i]] = i;
  }
  r.earlier_of.assign(now.arena.size(), ~0u);
  r.blocks.reserve(ln.size());
  for (std::size_t i = 0; i < ln.size(); ++i) {
    const Block& n = now.arena[ln[i]];
    const Block& e = earlier.arena[le[i]];
    if (e.ptr != rules.addresses.earlier(n.ptr) || !sameBlock(n, e, rank_n, rank_e)) return false;
    Repeat::BlockStep s{ln[i], le[i], 0, 0, n.gc_count_base - e.gc_count_base};
    if (!tagStep(n.tag, e.tag, rules.tag_step, s.tag) ||
        !tagStep(n.segment_tag, e.segment_tag, rules.tag_step, s.segment_tag))
      return false;
    r.earlier_of[ln[i]] = le[i];
    r.blocks.push_back(s);
  }
  return true;
}

bool sameOutstanding(const Impl& now, const Impl& earlier, const RepeatRules& rules, Repeat& r) {
  if (now.outstanding.size() != earlier.outstanding.size()) return false;
  r.event_sequence = static_cast<std::int64_t>(now.event_sequence - earlier.event_sequence);
  r.tag_step = rules.tag_step;
  for (std::size_t i = 0; i < now.outstanding.size(); ++i) {
    const OutstandingEvent& n = now.outstanding[i];
    const OutstandingEvent& e = earlier.outstanding[i];
    const BlockRef nb = now.outstanding_blocks[i];
    if (nb >= r.earlier_of.size() || r.earlier_of[nb] != earlier.outstanding_blocks[i]) return false;
    if (n.stream != e.stream || n.block_stream != e.block_stream || n.tag != e.tag + rules.tag_step ||
        static_cast<std::int64_t>(n.sequence - e.sequence) != r.event_sequence)
      return false;
    if (e.block_addr != rules.addresses.earlier(n.block_addr)) return false;
    if (!rules.completes_a_period_later || !rules.completes_a_period_later(n.tag, e.tag)) return false;
  }
  return true;
}

bool samePools(const Impl& now, const Impl& earlier, Repeat& r) {
  for (std::size_t p = 0; p < now.pools.size(); ++p) {
    const BlockPool& n = now.pools[p];
    const BlockPool& e = earlier.pools[p];
    if (n.is_small != e.is_small || n.owner != e.owner || n.blocks.size() != e.blocks.size() ||
        n.unmapped.size() != e.unmapped.size())
      return false;
    r.pool_calls.push_back(n.get_free_blocks_call_count - e.get_free_blocks_call_count);
  }
  return true;
}

}  // namespace

std::optional<Repeat> CachingAllocator::repeatOf(const CachingAllocator& earlier, const RepeatRules& rules) const {
  const Impl& n = *impl_;
  const Impl& e = *earlier.impl_;
  if (!comparable(n) || !comparable(e)) return std::nullopt;
  if (n.active_count != e.active_count || n.total_allocated_memory != e.total_allocated_memory ||
      n.allowed_memory_maximum != e.allowed_memory_maximum)
    return std::nullopt;
  if (!n.stats.sameCurrentValues(e.stats)) return std::nullopt;
  Repeat r;
  r.addresses = rules.addresses;
  r.counters = n.stats.growthSince(e.stats);
  if (!samePools(n, e, r) || !pairBlocks(n, e, rules, r) || !sameOutstanding(n, e, rules, r)) return std::nullopt;
  return r;
}

void CachingAllocator::advance(const Repeat& r, std::uint64_t periods) {
  Impl& m = *impl_;
  const auto k = [&](std::int64_t step) { return static_cast<std::uint64_t>(saturatingTimes(step, periods)); };
  for (const Repeat::BlockStep& s : r.blocks) {
    Block& b = m.arena[s.now];
    b.ptr = r.addresses.on(b.ptr, periods);
    b.tag += k(s.tag);
    b.segment_tag += k(s.segment_tag);
    b.gc_count_base += saturatingTimes(s.gc_base, periods);
  }
  // The free lists hold keys by address: the same order, new addresses.
  for (std::size_t p = 0; p < m.pools.size(); ++p) {
    BlockPool& pool = m.pools[p];
    std::vector<BlockRef> refs;
    pool.blocks.forEach([&](const SizeKey& key) { refs.push_back(key.ref); });
    pool.blocks = OrderedSet<SizeKey>{};
    for (BlockRef b : refs) pool.blocks.insert(m.sizeKey(b));
    pool.get_free_blocks_call_count += saturatingTimes(r.pool_calls[p], periods);
  }
  for (std::size_t i = 0; i < m.outstanding.size(); ++i) {
    OutstandingEvent& ev = m.outstanding[i];
    ev.block_addr = m.arena[m.outstanding_blocks[i]].ptr;
    ev.tag += r.tag_step * periods;
    ev.sequence += k(r.event_sequence);
  }
  m.event_sequence += k(r.event_sequence);
  m.stats.grow(r.counters, periods);
}

}  // namespace reservoir::sim
