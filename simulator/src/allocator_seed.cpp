// Seeding the model with the state at a trace window's start (ring-buffer traces).
#include <fmt/format.h>

#include "allocator_impl.h"

namespace reservoir::sim {

namespace {

Status checkSeed(const SeedSegment& s) {
  Addr cursor = s.addr;
  for (const SeedBlock& b : s.blocks) {
    if (b.addr < cursor || b.size == 0 || b.addr + b.size > s.addr + s.size)
      return Status::error(fmt::format("seed block at {:#x} ({} bytes) does not fit segment {:#x} ({} bytes)", b.addr,
                                       b.size, s.addr, s.size));
    cursor = b.addr + b.size;
  }
  return {};
}

}  // namespace

// The block pool a seeded segment's blocks live in: the default large or small pool, or the
// matching one of its private pool (created on first use, as a capture or MemPool would have).
std::uint32_t CachingAllocator::seedPool(const SeedSegment& s) {
  Impl& m = *impl_;
  if (s.pool == PoolId{}) return s.is_small ? 1u : 0u;
  if (m.pool_index.find(s.pool) == m.pool_index.end()) createPool(s.pool);
  const PrivatePool& pp = m.private_pools[m.pool_index.at(s.pool)];
  return s.is_small ? pp.small : pp.large;
}

Expected<std::vector<BlockHandle>> CachingAllocator::seed(std::span<const SeedSegment> segments) {
  Impl& m = *impl_;
  std::vector<BlockHandle> handles;
  for (const SeedSegment& s : segments) {
    if (Status st = checkSeed(s); !st.ok()) return st;
    const std::uint32_t pool = seedPool(s);
    if (m.pools[pool].owner != kNil) m.private_pools[m.pools[pool].owner].cuda_malloc_count++;
    m.total_allocated_memory += s.size;
    m.forStats(pool, [&](std::size_t t) {
      m.stats.segment[t].increase(1);
      m.stats.reserved_bytes[t].increase(static_cast<std::int64_t>(s.size));
    });
    if (s.size >= m.config.max_split_size) m.stats.oversize_segments.increase(1);
    // Carve the segment into blocks: occupied ones from the seed, free gaps between them.
    std::vector<BlockRef> chain;
    std::vector<bool> is_free;
    Addr cursor = s.addr;
    auto add = [&](Addr addr, ByteCount size, bool free_block) {
      const BlockRef b = m.newBlock(s.stream, size, pool, addr);
      chain.push_back(b);
      is_free.push_back(free_block);
      return b;
    };
    for (const SeedBlock& sb : s.blocks) {
      if (sb.addr > cursor) add(cursor, sb.addr - cursor, true);
      const BlockRef b = add(sb.addr, sb.size, false);
      Block& blk = m.arena[b];
      blk.requested_size = sb.requested;
      blk.tag = sb.tag;
      handles.push_back(BlockHandle{b});
      cursor = sb.addr + sb.size;
    }
    if (cursor < s.addr + s.size) add(cursor, s.addr + s.size - cursor, true);
    for (std::size_t i = 0; i < chain.size(); ++i) {
      m.arena[chain[i]].prev = i ? chain[i - 1] : kNil;
      m.arena[chain[i]].next = i + 1 < chain.size() ? chain[i + 1] : kNil;
    }
    std::size_t k = 0;
    for (std::size_t i = 0; i < chain.size(); ++i) {
      const BlockRef b = chain[i];
      if (is_free[i]) {
        m.insertIntoBlocks(b);
        if (m.arena[b].isSplit())
          m.forStats(pool, [&](std::size_t t) {
            m.stats.inactive_split[t].increase(1);
            m.stats.inactive_split_bytes[t].increase(static_cast<std::int64_t>(m.arena[b].size));
          });
        continue;
      }
      const SeedBlock& sb = s.blocks[k++];
      Block& blk = m.arena[b];
      const auto sz = static_cast<std::int64_t>(blk.size);
      ++m.active_count;
      m.forStats(pool, [&](std::size_t t) {
        m.stats.active[t].increase(1);
        m.stats.active_bytes[t].increase(sz);
        m.stats.requested_bytes[t].increase(static_cast<std::int64_t>(sb.requested));
      });
      if (sb.pending) {
        blk.event_count = 1;
        m.outstanding.push_back(OutstandingEvent{kUnknownUseStream, blk.stream, blk.ptr, blk.tag, m.event_sequence++});
        m.outstanding_blocks.push_back(b);
      } else {
        blk.allocated = true;
        m.forStats(pool, [&](std::size_t t) {
          m.stats.allocation[t].increase(1);
          m.stats.allocated_bytes[t].increase(sz);
        });
        if (blk.size >= m.config.max_split_size) m.stats.oversize_allocations.increase(1);
      }
    }
  }
  m.afterOperation("seed");
  return handles;
}

void CachingAllocator::processEvents() { impl_->processEvents(); }

}  // namespace reservoir::sim
