// Seeding the model with the state at a trace window's start (ring-buffer traces).
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "allocator_impl.h"

namespace reservoir::sim {

namespace {

Status checkSeed(const SeedSegment& s) {
  // torch rounds every block, and so every segment, to 512 bytes: other sizes are damage.
  if (s.size % kMinBlockSize != 0)
    return Status::error(
        fmt::format("seed segment at {:#x} has {} bytes, not a multiple of {}", s.addr, s.size, kMinBlockSize));
  Addr cursor = s.addr;
  for (const SeedBlock& b : s.blocks) {
    if (b.size % kMinBlockSize != 0)
      return Status::error(
          fmt::format("seed block at {:#x} has {} bytes, not a multiple of {}", b.addr, b.size, kMinBlockSize));
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

namespace {

// A seeded free block: in its pool's free list, counted as an inactive split block if split.
void seedFree(CachingAllocator::Impl& m, BlockRef b, std::uint32_t pool) {
  m.insertIntoBlocks(b);
  if (!m.arena[b].isSplit()) return;
  const std::size_t t = m.statType(pool);
  poolIncrease(m.stats.inactive_split, t, 1);
  poolIncrease(m.stats.inactive_split_bytes, t, static_cast<std::int64_t>(m.arena[b].size));
}

// A seeded occupied block: allocated, or freed and waiting for an unknown stream's event.
void seedOccupied(CachingAllocator::Impl& m, BlockRef b, const SeedBlock& sb, std::uint32_t pool) {
  Block& blk = m.arena[b];
  blk.requested_size = sb.requested;
  blk.tag = sb.tag;
  const auto sz = static_cast<std::int64_t>(blk.size);
  ++m.active_count;
  const std::size_t t = m.statType(pool);
  poolIncrease(m.stats.active, t, 1);
  poolIncrease(m.stats.active_bytes, t, sz);
  poolIncrease(m.stats.requested_bytes, t, static_cast<std::int64_t>(sb.requested));
  if (sb.pending) {
    blk.event_count = 1;
    m.outstanding.push_back(OutstandingEvent{kUnknownUseStream, blk.stream, blk.ptr, blk.tag, m.event_sequence++});
    m.outstanding_blocks.push_back(b);
    return;
  }
  blk.allocated = true;
  poolIncrease(m.stats.allocation, t, 1);
  poolIncrease(m.stats.allocated_bytes, t, sz);
  if (blk.size >= m.config.max_split_size) m.stats.oversize_allocations.increase(1);
}

// Blocks of [from, to): the occupied seed blocks in it, free gaps between them. Appends to
// `chain` with a kind per block (0 free, 1 occupied) and returns the next seed block.
// Carves the mapped range [from, to) into the blocks that lie in it (from block k on) and the
// free gaps between them; nullopt when a block does not lie wholly inside the range (it would
// overlap the unmapped pages around it: a damaged trace, not a state torch can be in).
std::optional<std::size_t> carve(CachingAllocator::Impl& m, const SeedSegment& s, std::uint32_t pool, Addr from,
                                 Addr to, std::size_t k, std::vector<BlockRef>& chain, std::vector<int>& kinds) {
  auto add = [&](Addr addr, ByteCount size, int kind) {
    chain.push_back(m.newBlock(s.stream, size, pool, addr));
    kinds.push_back(kind);
  };
  Addr cursor = from;
  for (; k < s.blocks.size() && s.blocks[k].addr < to; ++k) {
    const SeedBlock& sb = s.blocks[k];
    if (sb.addr < cursor || sb.size > to - sb.addr) return std::nullopt;
    if (sb.addr > cursor) add(cursor, sb.addr - cursor, 0);
    add(sb.addr, sb.size, 1);
    cursor = sb.addr + sb.size;
  }
  if (cursor < to) add(cursor, to - cursor, 0);
  return k;
}

void link(CachingAllocator::Impl& m, const std::vector<BlockRef>& chain) {
  for (std::size_t i = 0; i < chain.size(); ++i) {
    m.arena[chain[i]].prev = i ? chain[i - 1] : kNil;
    m.arena[chain[i]].next = i + 1 < chain.size() ? chain[i + 1] : kNil;
  }
}

}  // namespace

Expected<std::vector<BlockHandle>> CachingAllocator::seed(std::span<const SeedSegment> segments) {
  Impl& m = *impl_;
  std::vector<BlockHandle> handles;
  for (const SeedSegment& s : segments) {
    if (Status st = checkSeed(s); !st.ok()) return st;
    if (s.is_expandable) {
      if (Status st = seedExpandable(s, handles); !st.ok()) return st;
      continue;
    }
    const std::uint32_t pool = seedPool(s);
    if (m.pools[pool].owner != kNil) m.private_pools[m.pools[pool].owner].cuda_malloc_count++;
    m.total_allocated_memory += s.size;
    const std::size_t t = m.statType(pool);
    poolIncrease(m.stats.segment, t, 1);
    poolIncrease(m.stats.reserved_bytes, t, static_cast<std::int64_t>(s.size));
    if (s.size >= m.config.max_split_size) m.stats.oversize_segments.increase(1);
    // Carve the segment into blocks: occupied ones from the seed, free gaps between them.
    std::vector<BlockRef> chain;
    std::vector<int> kinds;
    carve(m, s, pool, s.addr, s.addr + s.size, 0, chain, kinds);
    link(m, chain);
    std::size_t k = 0;
    for (std::size_t i = 0; i < chain.size(); ++i) {
      if (kinds[i] == 0) {
        seedFree(m, chain[i], pool);
      } else {
        seedOccupied(m, chain[i], s.blocks[k++], pool);
        handles.push_back(BlockHandle{chain[i]});
      }
    }
  }
  m.afterOperation("seed");
  return handles;
}

// An expandable segment mid-run: one reservation (9/8 of the device or the configured
// reserve, at least the span the trace shows), its mapped ranges carved into blocks, the
// unmapped rest as unmapped blocks, all in one chain as map_block / unmap_block leave it.
Status CachingAllocator::seedExpandable(const SeedSegment& s, std::vector<BlockHandle>& handles) {
  Impl& m = *impl_;
  const std::uint32_t pool = seedPool(s);
  ExpandableSegment es;
  es.page = s.is_small ? kSmallBuffer : m.config.large_segment_size;
  if (s.size > kMaxReservation)
    return Status::error(fmt::format(
        "seed: the expandable segment at {:#x} spans {} bytes, more than a GPU's address space (2^48 bytes)", s.addr,
        s.size));
  const ByteCount reserve =
      std::max(std::min(m.config.expandableReserve(m.device->totalMemory()), kMaxReservation), s.size);
  es.max_handles = static_cast<std::size_t>((reserve + es.page - 1) / es.page);
  es.base = s.addr;
  es.mapped.assign(es.max_handles, false);
  es.stream = s.stream;
  es.live = true;
  const auto index = static_cast<std::uint32_t>(m.segments_es.size());
  m.segments_es.push_back(std::move(es));
  const ExpandableSegment& seg = m.segments_es.back();
  std::vector<BlockRef> chain;
  std::vector<int> kinds;  // 0 free, 1 occupied, 2 unmapped
  Addr cursor = seg.base;
  std::size_t k = 0;
  ByteCount mapped_total = 0;
  for (const auto& [addr, size] : s.mapped) {
    if (addr < cursor || (addr - seg.base) % seg.page != 0 || size % seg.page != 0 ||
        addr + size > seg.base + seg.size())
      return Status::error(
          fmt::format("seed: mapped range {:#x} (+{}) does not fit expandable segment {:#x}", addr, size, seg.base));
    if (addr > cursor) {
      chain.push_back(m.newBlock(s.stream, addr - cursor, pool, cursor));
      kinds.push_back(2);
    }
    const auto next = carve(m, s, pool, addr, addr + size, k, chain, kinds);
    if (!next)
      return Status::error(fmt::format(
          "seed: a block of expandable segment {:#x} crosses the edge of the mapped range {:#x} (+{} bytes)", seg.base,
          addr, size));
    k = *next;
    for (ByteCount p = (addr - seg.base) / seg.page; p < (addr + size - seg.base) / seg.page; ++p)
      m.segments_es[index].mapped[p] = true;
    mapped_total += size;
    cursor = addr + size;
  }
  if (k != s.blocks.size()) return Status::error(fmt::format("seed: a block of {:#x} lies in no mapped range", s.addr));
  if (cursor < seg.base + seg.size()) {
    chain.push_back(m.newBlock(s.stream, seg.base + seg.size() - cursor, pool, cursor));
    kinds.push_back(2);
  }
  link(m, chain);
  k = 0;
  for (std::size_t i = 0; i < chain.size(); ++i) {
    m.arena[chain[i]].expandable = index;
    if (kinds[i] == 2) {
      m.arena[chain[i]].mapped = false;
      m.pools[pool].unmapped.insert(m.addrKey(chain[i]));
    } else if (kinds[i] == 0) {
      m.insertIntoBlocks(chain[i]);  // free expandable blocks are not inactive *split* blocks
    } else {
      seedOccupied(m, chain[i], s.blocks[k++], pool);
      handles.push_back(BlockHandle{chain[i]});
    }
  }
  // Each mapped page may be unmapped later, each unmap counting down the pool's mallocs.
  if (m.pools[pool].owner != kNil)
    m.private_pools[m.pools[pool].owner].cuda_malloc_count += static_cast<int>(mapped_total / seg.page);
  m.total_allocated_memory += mapped_total;
  poolIncrease(m.stats.reserved_bytes, m.statType(pool), static_cast<std::int64_t>(mapped_total));
  return {};
}

void CachingAllocator::processEvents() { impl_->processEvents(); }

}  // namespace reservoir::sim
