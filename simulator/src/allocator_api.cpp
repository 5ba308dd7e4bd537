// The public face of the model: thin forwarding to Impl, plus pools and settings.
#include <algorithm>

#include "allocator_impl.h"

namespace reservoir::sim {

CachingAllocator::CachingAllocator(AllocatorConfig config, DeviceModel* device, EventSink* sink)
    : impl_(std::make_unique<Impl>(std::move(config), device, sink)) {}
CachingAllocator::~CachingAllocator() = default;
CachingAllocator::CachingAllocator(const CachingAllocator& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
CachingAllocator& CachingAllocator::operator=(const CachingAllocator& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(*other.impl_);
  return *this;
}
CachingAllocator::CachingAllocator(CachingAllocator&&) noexcept = default;
CachingAllocator& CachingAllocator::operator=(CachingAllocator&&) noexcept = default;

void CachingAllocator::rebind(DeviceModel* device, EventSink* sink) {
  impl_->device = device;
  impl_->sink = sink;
}

MallocResult CachingAllocator::malloc(ByteCount size, StreamId stream, std::uint64_t tag) {
  return impl_->malloc(size, stream, tag);
}

MallocResult CachingAllocator::mallocAt(Addr addr, ByteCount size, std::uint64_t tag) {
  return impl_->mallocAt(addr, size, tag);
}

void CachingAllocator::recordStream(BlockHandle block, StreamId stream) {
  Block& b = impl_->arena[block.index];
  if (stream == b.stream) return;  // uses on the allocation stream need no event
  if (std::find(b.stream_uses.begin(), b.stream_uses.end(), stream) == b.stream_uses.end())
    b.stream_uses.push_back(stream);
}

void CachingAllocator::free(BlockHandle block) { impl_->free(block.index); }

void CachingAllocator::emptyCache(PoolId pool) {
  impl_->releaseCachedBlocks(pool);
  impl_->afterOperation("empty_cache");
}

void CachingAllocator::setMemoryFraction(double fraction) {
  impl_->allowed_memory_maximum.reset();
  if (fraction < 1.0)
    impl_->allowed_memory_maximum =
        static_cast<ByteCount>(fraction * static_cast<double>(impl_->device->totalMemory()));
}

std::optional<ByteCount> CachingAllocator::allowedMemoryMaximum() const { return impl_->allowed_memory_maximum; }

Status CachingAllocator::setSettings(std::string_view conf) { return applyAllocConf(impl_->config, conf); }

void CachingAllocator::createPool(PoolId pool, bool use_on_oom, bool no_split) {
  Impl& m = *impl_;
  auto found = m.pool_index.find(pool);
  if (found != m.pool_index.end()) {
    m.private_pools[found->second].use_count++;
    return;
  }
  PrivatePool pp;
  pp.id = pool;
  pp.use_on_oom = use_on_oom;
  pp.no_split = no_split;
  const auto index = static_cast<std::uint32_t>(m.private_pools.size());
  pp.large = static_cast<std::uint32_t>(m.pools.size());
  pp.small = pp.large + 1;
  m.pools.emplace_back();
  m.pools.back().owner = index;
  m.pools.emplace_back();
  m.pools.back().is_small = true;
  m.pools.back().owner = index;
  m.private_pools.push_back(pp);
  m.pool_index[pool] = index;
  if (use_on_oom) m.use_on_oom_pools.push_back(pool);
}

void CachingAllocator::beginAllocateToPool(const PoolRouting& routing) {
  if (impl_->pool_index.find(routing.pool) == impl_->pool_index.end())
    createPool(routing.pool);
  else
    impl_->private_pools[impl_->pool_index[routing.pool]].use_count++;
  impl_->captures_underway.push_back(routing);
}

void CachingAllocator::endAllocateToPool(PoolId pool) {
  auto& cu = impl_->captures_underway;
  for (auto it = cu.begin(); it != cu.end(); ++it) {
    if (it->pool == pool) {
      cu.erase(it);
      return;
    }
  }
  impl_->fail("endAllocateToPool: not currently recording to that pool");
}

void CachingAllocator::releasePool(PoolId pool) {
  Impl& m = *impl_;
  auto found = m.pool_index.find(pool);
  if (found == m.pool_index.end()) {
    m.fail("releasePool: unknown pool");
    return;
  }
  if (--m.private_pools[found->second].use_count == 0) m.pools_freeable[pool] = found->second;
}

DeviceStats CachingAllocator::stats() const { return impl_->summedStats(); }
StatTotals CachingAllocator::totals() const { return impl_->totals(); }
PeakValues CachingAllocator::peaks() const { return peaksOf(impl_->stats); }
void CachingAllocator::resetPeakStats() { impl_->stats.resetPeaks(); }
const AllocatorConfig& CachingAllocator::config() const { return impl_->config; }
ByteCount CachingAllocator::totalAllocatedMemory() const { return impl_->total_allocated_memory; }
std::span<const OutstandingEvent> CachingAllocator::outstandingEvents() const { return impl_->outstanding; }

Addr CachingAllocator::addressOf(BlockHandle block) const { return impl_->arena[block.index].ptr; }
ByteCount CachingAllocator::sizeOf(BlockHandle block) const { return impl_->arena[block.index].size; }
std::uint64_t CachingAllocator::tagOf(BlockHandle block) const { return impl_->arena[block.index].tag; }
bool CachingAllocator::isAllocated(BlockHandle block) const {
  return block.index < impl_->arena.size() && impl_->arena[block.index].live && impl_->arena[block.index].allocated;
}

std::vector<SegmentView> CachingAllocator::segments() const { return impl_->segments(); }

std::vector<std::pair<Addr, ByteCount>> CachingAllocator::freeBlocksNear(ByteCount size, StreamId stream,
                                                                         std::size_t limit) const {
  const Impl& m = *impl_;
  const ByteCount rounded = m.config.roundSize(size);
  const BlockPool& pool = m.pools[m.getPool(rounded, stream)];
  std::vector<std::pair<Addr, ByteCount>> out;
  auto it = pool.blocks.lowerBound(SizeKey{stream, rounded, 0, kNil});
  for (std::size_t back = 0; back < limit / 2 && it != pool.blocks.begin(); ++back) pool.blocks.prev(it);
  for (; it != pool.blocks.end() && out.size() < limit; pool.blocks.next(it))
    if (pool.blocks.at(it).stream == stream) out.emplace_back(pool.blocks.at(it).ptr, pool.blocks.at(it).size);
  return out;
}

bool CachingAllocator::wouldReuseCachedBlock(ByteCount orig_size, StreamId stream) const {
  const Impl& m = *impl_;
  AllocParams p;
  p.size = m.config.roundSize(orig_size);
  p.stream = stream;
  p.pool = m.getPool(p.size, stream);
  p.expandable_active = m.config.expandable_segments;
  return m.findFreeBlock(p).ref != kNil;
}

bool CachingAllocator::wouldCollectGarbage() const {
  const Impl& m = *impl_;
  if (!m.allowed_memory_maximum || m.config.garbage_collection_threshold <= 0) return false;
  const auto limit =
      static_cast<ByteCount>(m.config.garbage_collection_threshold * static_cast<double>(*m.allowed_memory_maximum));
  if (m.total_allocated_memory <= limit) return false;
  bool any = false;
  m.pools[0].blocks.forEach(
      [&](const SizeKey& k) { any = any || (!m.arena[k.ref].isSplit() && m.arena[k.ref].expandable == kNil); });
  return any;
}

void CachingAllocator::setCheckLevel(CheckLevel level) { impl_->check_level = level; }
std::string CachingAllocator::validate() const { return impl_->validate(); }
const std::string& CachingAllocator::invariantFailure() const { return impl_->invariant_failure; }

}  // namespace reservoir::sim
