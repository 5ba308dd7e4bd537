#include "reservoir/traces/request_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include "key_table.h"

namespace reservoir::traces {
namespace {

using LiveTable = detail::KeyTable<AllocationId>;  // allocated or pending blocks by address

// Every allocation, and each entry's, into a RequestStream.
class StreamStore {
 public:
  explicit StreamStore(RequestStream* out) : out_(out) {}
  AllocationId add(const Allocation& a) {
    out_->allocations.push_back(a);
    return AllocationId(static_cast<std::uint32_t>(out_->allocations.size() - 1));
  }
  Allocation& operator[](AllocationId id) { return out_->allocations[id.value()]; }
  void link(std::uint32_t event, AllocationId id) { out_->event_allocation[event] = id; }
  void done(AllocationId) {}

 private:
  RequestStream* out_;
};

// Only what the window's start needs: an allocation is kept while the trace can still reach it
// (live or pending), then reduced to its place in WindowRequests (or dropped). The allocations
// the trace can reach sit in slots reused as they end, so memory follows the live ones; the ids
// the builder gets are slots, the ids in WindowRequests the allocations' numbers in the trace.
class WindowStore {
 public:
  WindowStore(WindowRequests* out, const DeviceTrace& trace) : out_(out), trace_(trace) {}
  AllocationId add(const Allocation& a) {
    std::uint32_t slot;
    if (free_.empty()) {
      slot = static_cast<std::uint32_t>(slots_.size());
      slots_.emplace_back();
    } else {
      slot = free_.back();
      free_.pop_back();
    }
    slots_[slot] = Slot{a, AllocationId(next_++), true};
    return AllocationId(slot);
  }
  Allocation& operator[](AllocationId slot) { return slots_[slot.value()].allocation; }
  void link(std::uint32_t, AllocationId) {}
  void done(AllocationId slot) {
    Slot& s = slots_[slot.value()];
    keep(s.id, s.allocation);
    s.used = false;
    free_.push_back(slot.value());
  }
  void finish() {
    for (const Slot& s : slots_)
      if (s.used) keep(s.id, s.allocation);
    std::sort(out_->before_window.begin(), out_->before_window.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
  }

 private:
  struct Slot {
    Allocation allocation;
    AllocationId id;  // its number in the trace
    bool used = false;
  };
  void keep(AllocationId id, const Allocation& a) {
    if (a.beforeWindow())
      out_->before_window.emplace_back(id, a);
    else if (a.liveAtEnd())
      out_->live_at_end.push_back(allocationAddress(a, trace_));
  }
  WindowRequests* out_;
  const DeviceTrace& trace_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_;
  std::uint32_t next_ = 0;
};

template <typename Store>
class Builder {
 public:
  Builder(Store* store, const EventExtraTable& extras, AnomalyCounters* anomalies, std::size_t* before_window)
      : store_(*store), extras_(extras), anomalies_(*anomalies), before_window_(*before_window), live_(1024) {}

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
    Allocation a;  // its address is e's (allocationAddress: its first entry)
    a.size = e.size;
    // A backward-pass entry's call site is its forward frames (StackId 0 is the empty stack).
    const EventExtra& x = extras_[e.extraId()];
    a.stack = x.has_forward_frames && (!e.stack.valid() || e.stack.value() == 0) ? x.forward_stack : e.stack;
    return store_.add(a);
  }

  void onAlloc(std::uint32_t index, const TraceEvent& e) {
    if (const std::size_t slot = live_.find(e.addr); slot != LiveTable::kMissing) {
      anomalies_.add(Anomaly::alloc_over_live_block, fmt::format("event {} at {:#x}", index, e.addr));
      const AllocationId over = live_.at(slot);
      live_.erase(slot);
      store_.done(over);
    }
    const AllocationId id = create(e);
    store_[id].alloc_event = index;
    live_.put(e.addr, id);
    store_.link(index, id);
  }

  void onFreeRequested(std::uint32_t index, const TraceEvent& e) {
    AllocationId id;
    const std::size_t slot = live_.find(e.addr);
    if (slot == LiveTable::kMissing || store_[live_.at(slot)].free_requested_event != kNoEvent) {
      // Allocated before the window (a ring-buffer trace).
      if (slot != LiveTable::kMissing) store_.done(live_.at(slot));  // its address is taken over
      id = create(e);
      live_.put(e.addr, id);
      ++before_window_;
      anomalies_.add(Anomaly::free_without_alloc);
    } else {
      id = live_.at(slot);
    }
    store_[id].free_requested_event = index;
    store_.link(index, id);
  }

  void onFreeCompleted(std::uint32_t index, const TraceEvent& e) {
    const std::size_t slot = live_.find(e.addr);
    AllocationId id;
    if (slot == LiveTable::kMissing) {
      // Freed (requested) before the window, completed inside it.
      id = create(e);
      ++before_window_;
      anomalies_.add(Anomaly::free_without_alloc);
    } else {
      id = live_.at(slot);
      live_.erase(slot);
    }
    Allocation& a = store_[id];
    if (a.free_requested_event == kNoEvent && !a.beforeWindow() && !free_requested_skipped_)
      anomalies_.add(Anomaly::free_completed_without_request, fmt::format("event {}", index));
    a.free_completed_event = index;
    store_.link(index, id);
    store_.done(id);
  }

  Store& store_;
  const EventExtraTable& extras_;
  AnomalyCounters& anomalies_;
  std::size_t& before_window_;
  LiveTable live_;  // allocated or pending blocks by address

 public:
  bool free_requested_skipped_ = false;  // recorded with skip_actions=["free_requested"]
};

template <typename Store>
void walk(const DeviceTrace& trace, Builder<Store>& b, const std::vector<Action>& skipped, const std::atomic<bool>* cancel) {
  b.free_requested_skipped_ = std::find(skipped.begin(), skipped.end(), Action::kFreeRequested) != skipped.end();
  for (std::uint32_t i = 0; i < trace.events.size(); ++i) {
    if (cancel && (i & 4095) == 0 && cancel->load(std::memory_order_relaxed)) break;
    b.onEvent(i, trace.events[i]);
  }
}

}  // namespace

RequestStream buildRequestStream(const DeviceTrace& trace, const EventExtraTable& extras,
                                 const std::atomic<bool>* cancel) {
  RequestStream out;
  out.event_allocation.assign(trace.events.size(), AllocationId());
  std::size_t allocs = 0;
  for (const TraceEvent& e : trace.events) allocs += e.action == Action::kAlloc;
  out.allocations.reserve(allocs);
  out.skipped_actions = inferSkippedActions(trace);
  StreamStore store(&out);
  Builder b(&store, extras, &out.anomalies, &out.before_window);
  walk(trace, b, out.skipped_actions, cancel);
  return out;
}

WindowRequests buildWindowRequests(const DeviceTrace& trace, const EventExtraTable& extras) {
  WindowRequests out;
  AnomalyCounters anomalies;
  std::size_t before_window = 0;
  WindowStore store(&out, trace);
  Builder b(&store, extras, &anomalies, &before_window);
  walk(trace, b, inferSkippedActions(trace), nullptr);
  store.finish();
  return out;
}

WindowRequests windowRequests(const RequestStream& requests, const DeviceTrace& trace) {
  WindowRequests out;
  for (std::uint32_t i = 0; i < requests.allocations.size(); ++i) {
    const Allocation& a = requests.allocations[i];
    if (a.beforeWindow())
      out.before_window.emplace_back(AllocationId(i), a);
    else if (a.liveAtEnd())
      out.live_at_end.push_back(allocationAddress(a, trace));
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
