#include "whatif/device_models.h"

#include <algorithm>
#include <iterator>

namespace reservoir::replay {

const char* addressModelName(AddressModel model) {
  switch (model) {
    case AddressModel::kRecorded: return "recorded";
    case AddressModel::kDriver: return "driver";
    case AddressModel::kAnchored: return "anchored";
  }
  return "recorded";
}

}  // namespace reservoir::replay

namespace reservoir::replay::detail {
namespace {

constexpr ByteCount kAlign = 2 * 1024 * 1024;
constexpr Addr kDefaultTop = 0x7f0000000000ull;

}  // namespace

WhatIfDevice::WhatIfDevice(const PreparedTrace& prepared, AddressModel model, std::optional<ByteCount> usable)
    : total_(prepared.total_memory), model_(model), usable_(usable), prepared_(&prepared) {
  Addr lowest = kDefaultTop;
  if (!prepared.recorded_segments_by_size.empty())
    for (const auto& [size, addrs] : prepared.recorded_segments_by_size)
      for (Addr a : addrs) lowest = std::min(lowest, a);
  for (Addr base : prepared.program.reservation_bases) recorded_reservations_.push_back(base);
  Addr seed_lowest = kDefaultTop;
  for (const auto& s : prepared.program.seed) {
    live_[s.addr] = s.size;
    if (!s.is_expandable) chunks_.taken(s.addr, s.size);
    used_ += s.reservedBytes();  // an expandable segment holds only its mapped pages
    lowest = std::min(lowest, s.addr);
    seed_lowest = std::min(seed_lowest, s.addr);
  }
  floor_ = lowest;
  anchor_floor_ = seed_lowest;
}

std::optional<Addr> WhatIfDevice::overlapStart(Addr addr, ByteCount size) const {
  const auto in_the_way = firstOverlap(live_, addr, size);
  return in_the_way ? std::optional<Addr>(in_the_way->first) : std::nullopt;
}

Addr WhatIfDevice::driverPlacement(ByteCount size, ByteCount align) {
  // Below everything handed out so far, like the driver's top-down VA placement: the highest
  // aligned place under the floor that overlaps nothing. Each step goes below the range in the
  // way at once (stepping a page at a time took minutes past a range of terabytes).
  const ByteCount rounded = (size + align - 1) / align * align;
  Addr a = floor_ >= rounded ? (floor_ - rounded) / align * align : 0;
  while (const auto in_the_way = overlapStart(a, rounded)) {
    if (*in_the_way < rounded) {  // no room below it: a damaged trace's layout, placed at 0
      a = 0;
      break;
    }
    a = (*in_the_way - rounded) / align * align;
  }
  floor_ = a;
  return a;
}

Addr WhatIfDevice::chunkPlacement(ByteCount size) {
  if (const auto in_room = chunks_.fit(size, live_)) return *in_room;
  return driverPlacement(size, DriverChunks::kGranule);
}

std::optional<Addr> WhatIfDevice::anchoredAddress(ByteCount size) {
  if (departed_) return std::nullopt;
  const auto& events = prepared_->recorded_segment_events;
  if (anchor_ < events.size() && events[anchor_].alloc && events[anchor_].size == size &&
      !overlaps(events[anchor_].addr, size)) {
    const Addr a = events[anchor_++].addr;
    anchor_floor_ = std::min(anchor_floor_, a);
    return a;
  }
  departFromRecording();
  return std::nullopt;
}

void WhatIfDevice::anchoredFree(Addr addr) {
  if (departed_) return;
  const auto& events = prepared_->recorded_segment_events;
  if (anchor_ < events.size() && !events[anchor_].alloc && events[anchor_].addr == addr)
    ++anchor_;
  else
    departFromRecording();
}

std::optional<Addr> WhatIfDevice::afterThePrevious(ByteCount size) const {
  // The recording's k-th cudaMalloc went right after its (k-1)-th: the edited run's does the same.
  const std::size_t k = mallocs_;
  const auto& follows = prepared_->recorded_malloc_follows_previous;
  if (k >= follows.size() || !follows[k]) return std::nullopt;  // follows[0] is false
  const Addr a = last_malloc_.addr + (last_malloc_.size + kAlign - 1) / kAlign * kAlign;
  if (overlaps(a, size)) return std::nullopt;
  return a;
}

void WhatIfDevice::departFromRecording() {
  // The driver goes on below what it handed out in the recording so far (not below every
  // address the recording ever used, as the driver model starts: the run is that far only).
  departed_ = true;
  floor_ = anchor_floor_;
}

std::optional<Addr> WhatIfDevice::cudaMalloc(ByteCount size, sim::StreamId) {
  if (usable_ && used_ + size > *usable_) return std::nullopt;
  Addr a = 0;
  bool placed = false;
  if (model_ == AddressModel::kAnchored) {
    if (const auto anchored = anchoredAddress(size)) {
      a = *anchored;
      placed = true;
    }
  }
  if (model_ == AddressModel::kRecorded) {
    const auto it = prepared_->recorded_segments_by_size.find(size);
    if (it != prepared_->recorded_segments_by_size.end()) {
      const auto& addrs = it->second;
      SizeCursor& c = cursors_[size];
      if (c.taken.empty()) c.taken.assign(addrs.size(), false);
      while (c.next < addrs.size() && c.taken[c.next]) ++c.next;
      for (std::size_t i = c.next; i < addrs.size(); ++i) {
        if (c.taken[i] || overlaps(addrs[i], size)) continue;
        a = addrs[i];
        c.taken[i] = true;
        placed = true;
        break;
      }
    }
  }
  if (!placed && model_ == AddressModel::kAnchored) {
    if (const auto after = afterThePrevious(size)) {
      a = *after;
      placed = true;
    }
  }
  if (!placed) a = chunkPlacement(size);
  chunks_.taken(a, size);
  if (model_ == AddressModel::kAnchored) {
    ++mallocs_;
    last_malloc_ = {a, size};
  }
  live_[a] = size;
  used_ += size;
  ++work_.cuda_mallocs;
  return a;
}

void WhatIfDevice::cudaFree(Addr addr, ByteCount size) {
  if (model_ == AddressModel::kAnchored) anchoredFree(addr);
  live_.erase(addr);
  chunks_.given(addr, size);
  used_ -= size;
  ++work_.cuda_frees;
}

Addr WhatIfDevice::reserveAddress(ByteCount size, ByteCount page, sim::StreamId) {
  Addr a = 0;
  bool placed = false;
  if (recordedReservations()) {
    while (!recorded_reservations_.empty() && !placed) {
      a = recorded_reservations_.front();
      recorded_reservations_.pop_front();
      placed = !overlaps(a, size);
    }
  }
  if (!placed) a = driverPlacement(size, std::max<ByteCount>(page, kAlign));
  live_[a] = size;
  return a;
}

void WhatIfDevice::releaseAddress(Addr addr, ByteCount) { live_.erase(addr); }

bool WhatIfDevice::mapPages(Addr, ByteCount size, sim::StreamId) {
  if (usable_ && used_ + size > *usable_) return false;
  used_ += size;
  work_.bytes_mapped += size;
  return true;
}

void WhatIfDevice::unmapPages(Addr, ByteCount size) {
  used_ -= size;
  work_.bytes_unmapped += size;
}

bool WhatIfDevice::placesByDriverModel() const {
  const bool past_contiguity = mallocs_ >= prepared_->recorded_malloc_follows_previous.size();
  return model_ == AddressModel::kDriver || (model_ == AddressModel::kAnchored && departed_ && past_contiguity);
}

std::optional<sim::AddressStep> WhatIfDevice::addressStepSince(const WhatIfDevice& earlier) const {
  if (live_.size() != earlier.live_.size() || used_ != earlier.used_ || usable_ != earlier.usable_ ||
      earlier.floor_ < floor_ || (earlier.floor_ - floor_) % DriverChunks::kGranule != 0)
    return std::nullopt;
  const Addr step = earlier.floor_ - floor_;
  // Ranges in address order: those that moved `step` lower first, then those that stayed.
  Addr stayed_from = step == 0 ? 0 : ~Addr{0};
  for (auto n = live_.begin(), e = earlier.live_.begin(); n != live_.end(); ++n, ++e) {
    if (n->second != e->second) return std::nullopt;
    if (stayed_from == ~Addr{0} && e->first == n->first + step) continue;
    if (e->first != n->first) return std::nullopt;
    if (stayed_from == ~Addr{0}) stayed_from = n->first;
  }
  const sim::AddressStep a{stayed_from, step};
  if (!chunks_.sameMoved(earlier.chunks_, a)) return std::nullopt;
  return a;
}

void WhatIfDevice::advance(const WhatIfDevice& earlier, const sim::AddressStep& a, std::uint64_t periods) {
  std::map<Addr, ByteCount> moved;
  for (const auto& [addr, size] : live_) moved.emplace(a.on(addr, periods), size);
  live_ = std::move(moved);
  chunks_.move(a, periods);
  floor_ -= a.step * periods;
  last_malloc_.addr = a.on(last_malloc_.addr, periods);
  mallocs_ += (mallocs_ - earlier.mallocs_) * periods;
  work_.cuda_mallocs += (work_.cuda_mallocs - earlier.work_.cuda_mallocs) * periods;
  work_.cuda_frees += (work_.cuda_frees - earlier.work_.cuda_frees) * periods;
  work_.bytes_mapped += (work_.bytes_mapped - earlier.work_.bytes_mapped) * periods;
  work_.bytes_unmapped += (work_.bytes_unmapped - earlier.work_.bytes_unmapped) * periods;
  poll_ = PollState{};  // what the last poll saw is another period's
}

ByteCount WhatIfDevice::deviceFree() {
  const ByteCount cap = usable_.value_or(total_);
  return cap > used_ ? cap - used_ : 0;
}

std::uint32_t WhatIfDevice::completionOf(std::uint64_t tag) const {
  return prepared_->completionOf(tag);
}

void WhatIfDevice::pollEvents(std::span<const sim::OutstandingEvent> outstanding, std::vector<std::size_t>& completed) {
  // Per stream, in order, until the first event whose work is not done yet (CUDA events
  // complete in stream order). When the list still starts with the events the last poll left
  // all pending, and none of those streams' first events is due yet, only the events added
  // since are looked at (the model polls before every malloc).
  std::size_t from = 0;
  if (poll_.resumable(outstanding) && current_op_ < poll_.earliest) {
    from = poll_.size;
  } else {
    poll_.blocked.clear();
    poll_.earliest = kNoOp;
  }
  for (std::size_t i = from; i < outstanding.size(); ++i) {
    const auto& ev = outstanding[i];
    if (std::find(poll_.blocked.begin(), poll_.blocked.end(), ev.stream) != poll_.blocked.end()) continue;
    const std::uint32_t at = completionOf(ev.tag);
    if (at != kNoOp && at <= current_op_) {
      completed.push_back(i);
    } else {
      poll_.blocked.push_back(ev.stream);
      poll_.earliest = std::min(poll_.earliest, at);
    }
  }
  poll_.remember(outstanding, completed.empty());
}

bool WhatIfDevice::PollState::resumable(std::span<const sim::OutstandingEvent> outstanding) const {
  // Sequences only grow along the list, so the same first and size-th sequence mean the same
  // first `size` events (a retire removes events, a record appends them).
  return valid && size > 0 && outstanding.size() >= size && outstanding.front().sequence == first &&
         outstanding[size - 1].sequence == last;
}

void WhatIfDevice::PollState::remember(std::span<const sim::OutstandingEvent> outstanding, bool none_completed) {
  valid = none_completed && !outstanding.empty();
  size = outstanding.size();
  first = valid ? outstanding.front().sequence : 0;
  last = valid ? outstanding.back().sequence : 0;
}

void WhatIfDevice::syncOrder(std::span<const sim::OutstandingEvent> outstanding, std::vector<std::size_t>& order) {
  for (std::size_t i = 0; i < outstanding.size(); ++i) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return completionOf(outstanding[a].tag) < completionOf(outstanding[b].tag);
  });
}

}  // namespace reservoir::replay::detail
