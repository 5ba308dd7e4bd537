#include "reservoir/traces/request_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <vector>

namespace reservoir::traces {
namespace {

// Live blocks by address: an open-addressing table (linear probing, backward-shift erase),
// a few times faster here than std::unordered_map and without a node per entry.
class LiveTable {
 public:
  explicit LiveTable(std::size_t expected) { rehash(std::bit_ceil(std::max<std::size_t>(64, expected * 2))); }

  // The slot holding `addr`, or kMissing.
  [[nodiscard]] std::size_t find(Addr addr) const {
    for (std::size_t i = home(addr);; i = (i + 1) & mask_) {
      if (!slots_[i].used) return kMissing;
      if (slots_[i].addr == addr) return i;
    }
  }
  [[nodiscard]] AllocationId at(std::size_t slot) const { return slots_[slot].id; }
  void put(Addr addr, AllocationId id) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    std::size_t i = home(addr);
    for (; slots_[i].used; i = (i + 1) & mask_)
      if (slots_[i].addr == addr) {
        slots_[i].id = id;
        return;
      }
    slots_[i] = Slot{addr, id, true};
    ++size_;
  }
  void erase(std::size_t slot) {
    // Backward shift: move later entries of the probe run into the hole.
    std::size_t hole = slot;
    for (std::size_t j = (hole + 1) & mask_; slots_[j].used; j = (j + 1) & mask_) {
      const std::size_t h = home(slots_[j].addr);
      // Movable when its home is not in (hole, j], cyclically.
      if (((j - h) & mask_) >= ((j - hole) & mask_)) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].used = false;
    --size_;
  }
  static constexpr std::size_t kMissing = ~std::size_t{0};

 private:
  struct Slot {
    Addr addr = 0;
    AllocationId id;
    bool used = false;
  };
  [[nodiscard]] std::size_t home(Addr addr) const {
    std::uint64_t h = addr * 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(h >> 32) & mask_;
  }
  void rehash(std::size_t n) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(n, Slot{});
    mask_ = n - 1;
    size_ = 0;
    for (const Slot& s : old)
      if (s.used) put(s.addr, s.id);
  }
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

class Builder {
 public:
  Builder(RequestStream* out, std::size_t expected_live) : out_(out), live_(expected_live) {}

  void onEvent(std::uint32_t index, const TraceEvent& e) {
    switch (e.action) {
      case Action::kAlloc: onAlloc(index, e); break;
      case Action::kFreeRequested: onFreeRequested(index, e); break;
      case Action::kFreeCompleted: onFreeCompleted(index, e); break;
      default: break;
    }
  }

 private:
  AllocationId create(const TraceEvent& e) {
    const AllocationId id(static_cast<std::uint32_t>(out_->allocations.size()));
    Allocation a;
    a.addr = e.addr;
    a.size = e.size;
    a.stream = e.stream;
    // A backward-pass entry's call site is its forward frames (StackId 0 is the empty stack).
    a.stack = e.has_forward_frames && (!e.stack.valid() || e.stack.value() == 0) ? e.forward_stack : e.stack;
    out_->allocations.push_back(a);
    return id;
  }

  void onAlloc(std::uint32_t index, const TraceEvent& e) {
    if (const std::size_t slot = live_.find(e.addr); slot != LiveTable::kMissing) {
      out_->anomalies.add(Anomaly::alloc_over_live_block, fmt::format("event {} at {:#x}", index, e.addr));
      live_.erase(slot);
    }
    const AllocationId id = create(e);
    out_->allocations[id.value()].alloc_event = index;
    live_.put(e.addr, id);
    out_->event_allocation[index] = id;
  }

  void onFreeRequested(std::uint32_t index, const TraceEvent& e) {
    AllocationId id;
    const std::size_t slot = live_.find(e.addr);
    if (slot == LiveTable::kMissing || out_->allocations[live_.at(slot).value()].free_requested_event != kNoEvent) {
      // Allocated before the window (a ring-buffer trace).
      id = create(e);
      live_.put(e.addr, id);
      ++out_->before_window;
      out_->anomalies.add(Anomaly::free_without_alloc);
    } else {
      id = live_.at(slot);
    }
    out_->allocations[id.value()].free_requested_event = index;
    out_->event_allocation[index] = id;
  }

  void onFreeCompleted(std::uint32_t index, const TraceEvent& e) {
    const std::size_t slot = live_.find(e.addr);
    AllocationId id;
    if (slot == LiveTable::kMissing) {
      // Freed (requested) before the window, completed inside it.
      id = create(e);
      ++out_->before_window;
      out_->anomalies.add(Anomaly::free_without_alloc);
    } else {
      id = live_.at(slot);
      live_.erase(slot);
    }
    Allocation& a = out_->allocations[id.value()];
    if (a.free_requested_event == kNoEvent && !a.beforeWindow() && !free_requested_skipped_)
      out_->anomalies.add(Anomaly::free_completed_without_request, fmt::format("event {}", index));
    a.free_completed_event = index;
    out_->event_allocation[index] = id;
  }

  RequestStream* out_;
  LiveTable live_;  // allocated or pending blocks by address

 public:
  bool free_requested_skipped_ = false;  // recorded with skip_actions=["free_requested"]
};

}  // namespace

RequestStream buildRequestStream(const DeviceTrace& trace, const std::atomic<bool>* cancel) {
  RequestStream out;
  out.event_allocation.assign(trace.events.size(), AllocationId());
  std::size_t allocs = 0;
  for (const TraceEvent& e : trace.events) allocs += e.action == Action::kAlloc;
  out.allocations.reserve(allocs);
  out.skipped_actions = inferSkippedActions(trace);
  Builder b(&out, 1024);
  b.free_requested_skipped_ = std::find(out.skipped_actions.begin(), out.skipped_actions.end(),
                                        Action::kFreeRequested) != out.skipped_actions.end();
  for (std::uint32_t i = 0; i < trace.events.size(); ++i) {
    if (cancel && (i & 4095) == 0 && cancel->load(std::memory_order_relaxed)) break;
    b.onEvent(i, trace.events[i]);
  }
  return out;
}

std::vector<Action> inferSkippedActions(const DeviceTrace& trace) {
  std::array<std::size_t, kActionCount> n{};
  for (const TraceEvent& e : trace.events) ++n[static_cast<std::size_t>(e.action)];
  auto count = [&](Action a) { return n[static_cast<std::size_t>(a)]; };
  std::vector<Action> out;
  const std::size_t frees = count(Action::kFreeRequested) + count(Action::kFreeCompleted);
  if (count(Action::kAlloc) == 0 && frees > 0) out.push_back(Action::kAlloc);
  if (count(Action::kFreeRequested) == 0 && count(Action::kFreeCompleted) > 0 && count(Action::kAlloc) > 0)
    out.push_back(Action::kFreeRequested);
  if (count(Action::kFreeCompleted) == 0 && count(Action::kFreeRequested) > 0 && count(Action::kAlloc) > 0)
    out.push_back(Action::kFreeCompleted);
  if (count(Action::kSegmentAlloc) == 0 && count(Action::kSegmentFree) > 0) out.push_back(Action::kSegmentAlloc);
  if (count(Action::kSegmentMap) == 0 && count(Action::kSegmentUnmap) > 0) out.push_back(Action::kSegmentMap);
  return out;
}

}  // namespace reservoir::traces
