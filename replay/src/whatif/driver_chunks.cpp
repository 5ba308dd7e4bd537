#include "whatif/driver_chunks.h"

#include <algorithm>
#include <iterator>

namespace reservoir::replay::detail {
namespace {

using sim::Addr;
using sim::ByteCount;

constexpr Addr roundUp(Addr x, ByteCount to) { return (x + to - 1) / to * to; }

}  // namespace

std::optional<std::pair<Addr, ByteCount>> firstOverlap(const std::map<Addr, ByteCount>& live, Addr addr,
                                                        ByteCount size) {
  auto it = live.upper_bound(addr);
  if (it != live.begin()) {
    const auto below = std::prev(it);
    if (below->first + below->second > addr) return *below;
  }
  if (it != live.end() && it->first < addr + size) return *it;
  return std::nullopt;
}

std::optional<Addr> DriverChunks::fit(ByteCount size, const std::map<Addr, ByteCount>& live) const {
  for (const auto& [start, end] : room_) {
    Addr a = start;
    while (a + size <= end) {
      const auto in_the_way = firstOverlap(live, a, size);
      if (!in_the_way) return a;
      a = roundUp(in_the_way->first + in_the_way->second, kPage);
    }
  }
  return std::nullopt;
}

std::map<Addr, Addr>::const_iterator DriverChunks::chunkHolding(Addr addr) const {
  auto it = chunks_.upper_bound(addr);
  if (it == chunks_.begin()) return chunks_.end();
  --it;
  return it->second > addr ? it : chunks_.end();
}

std::vector<DriverChunks::Room>::iterator DriverChunks::roomFrom(Addr addr) {
  return std::lower_bound(room_.begin(), room_.end(), addr, [](const Room& r, Addr a) { return r.start < a; });
}

void DriverChunks::carve(Addr from, Addr to) {
  auto it = std::upper_bound(room_.begin(), room_.end(), from, [](Addr a, const Room& r) { return a < r.start; });
  if (it != room_.begin()) --it;
  while (it != room_.end() && it->start < to) {
    const Room r = *it;
    if (r.end <= from) {
      ++it;
      continue;
    }
    // What stays of the room: its part below `from` and its part above `to`.
    if (r.start < from && r.end > to) {
      it->end = from;
      room_.insert(it + 1, Room{to, r.end});
      return;
    }
    if (r.start < from) {
      it->end = from;
      ++it;
    } else if (r.end > to) {
      it->start = to;
      return;
    } else {
      it = room_.erase(it);
    }
  }
}

void DriverChunks::addRoom(Addr from, Addr to) {
  if (from >= to) return;
  auto next = roomFrom(from);
  if (next != room_.end() && next->start == to) {  // joins the room above
    to = next->end;
    next = room_.erase(next);
  }
  if (next != room_.begin()) {
    const auto below = std::prev(next);
    if (below->end == from) {  // joins the room below
      below->end = to;
      return;
    }
  }
  room_.insert(next, Room{from, to});
}

void DriverChunks::taken(Addr addr, ByteCount size) {
  const Addr end = addr + roundUp(size, kPage);
  if (chunkHolding(addr) != chunks_.end()) {
    carve(addr, end);
    return;
  }
  if (addr % kGranule != 0) return;  // somewhere the driver's chunks do not explain
  const Addr chunk_end = addr + roundUp(size, kGranule);
  chunks_.emplace(addr, chunk_end);
  addRoom(end, chunk_end);
}

void DriverChunks::given(Addr addr, ByteCount size) {
  if (const auto head = chunks_.find(addr); head != chunks_.end()) {
    carve(head->first, head->second);
    chunks_.erase(head);
    return;
  }
  const auto chunk = chunkHolding(addr);
  if (chunk == chunks_.end()) return;
  addRoom(addr, std::min<Addr>(addr + roundUp(size, kPage), chunk->second));
}

bool DriverChunks::sameMoved(const DriverChunks& earlier, const sim::AddressStep& a) const {
  if (chunks_.size() != earlier.chunks_.size() || room_.size() != earlier.room_.size()) return false;
  for (auto n = chunks_.begin(), e = earlier.chunks_.begin(); n != chunks_.end(); ++n, ++e)
    if (e->first != a.earlier(n->first) || n->second - n->first != e->second - e->first) return false;
  for (std::size_t i = 0; i < room_.size(); ++i)
    if (earlier.room_[i].start != a.earlier(room_[i].start) ||
        room_[i].end - room_[i].start != earlier.room_[i].end - earlier.room_[i].start)
      return false;
  return true;
}

void DriverChunks::move(const sim::AddressStep& a, std::uint64_t periods) {
  std::map<Addr, Addr> moved;
  for (const auto& [start, end] : chunks_) {
    const Addr to = a.on(start, periods);
    moved.emplace(to, end - start + to);
  }
  chunks_ = std::move(moved);
  for (Room& r : room_) {
    const Addr to = a.on(r.start, periods);
    r.end = r.end - r.start + to;
    r.start = to;
  }
}

ByteCount DriverChunks::roomBytes() const {
  ByteCount total = 0;
  for (const auto& [start, end] : room_) total += end - start;
  return total;
}

}  // namespace reservoir::replay::detail
