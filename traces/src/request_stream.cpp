#include "reservoir/traces/request_stream.h"

#include <fmt/format.h>

#include <unordered_map>

namespace reservoir::traces {
namespace {

class Builder {
 public:
  explicit Builder(RequestStream* out) : out_(out) {}

  void onEvent(std::uint32_t index, const TraceEvent& e) {
    switch (e.action) {
      case Action::kAlloc:
        onAlloc(index, e);
        break;
      case Action::kFreeRequested:
        onFreeRequested(index, e);
        break;
      case Action::kFreeCompleted:
        onFreeCompleted(index, e);
        break;
      default:
        break;
    }
  }

 private:
  AllocationId create(const TraceEvent& e) {
    const AllocationId id(static_cast<std::uint32_t>(out_->allocations.size()));
    Allocation a;
    a.addr = e.addr;
    a.size = e.size;
    a.stream = e.stream;
    a.stack = e.stack;
    out_->allocations.push_back(a);
    return id;
  }

  void onAlloc(std::uint32_t index, const TraceEvent& e) {
    if (auto it = live_.find(e.addr); it != live_.end()) {
      out_->anomalies.add(Anomaly::alloc_over_live_block, fmt::format("event {} at {:#x}", index, e.addr));
      live_.erase(it);
    }
    const AllocationId id = create(e);
    out_->allocations[id.value()].alloc_event = index;
    live_[e.addr] = id;
    out_->event_allocation[index] = id;
  }

  void onFreeRequested(std::uint32_t index, const TraceEvent& e) {
    AllocationId id;
    auto it = live_.find(e.addr);
    if (it == live_.end() || out_->allocations[it->second.value()].free_requested_event != kNoEvent) {
      // Allocated before the window (a ring-buffer trace).
      id = create(e);
      live_[e.addr] = id;
      ++out_->before_window;
      out_->anomalies.add(Anomaly::free_without_alloc);
    } else {
      id = it->second;
    }
    out_->allocations[id.value()].free_requested_event = index;
    out_->event_allocation[index] = id;
  }

  void onFreeCompleted(std::uint32_t index, const TraceEvent& e) {
    auto it = live_.find(e.addr);
    AllocationId id;
    if (it == live_.end()) {
      // Freed (requested) before the window, completed inside it.
      id = create(e);
      ++out_->before_window;
      out_->anomalies.add(Anomaly::free_without_alloc);
    } else {
      id = it->second;
      live_.erase(it);
    }
    Allocation& a = out_->allocations[id.value()];
    if (a.free_requested_event == kNoEvent && !a.beforeWindow())
      out_->anomalies.add(Anomaly::free_completed_without_request, fmt::format("event {}", index));
    a.free_completed_event = index;
    out_->event_allocation[index] = id;
  }

  RequestStream* out_;
  std::unordered_map<Addr, AllocationId> live_;  // allocated or pending blocks by address
};

}  // namespace

RequestStream buildRequestStream(const DeviceTrace& trace) {
  RequestStream out;
  out.event_allocation.assign(trace.events.size(), AllocationId());
  Builder b(&out);
  for (std::uint32_t i = 0; i < trace.events.size(); ++i) b.onEvent(i, trace.events[i]);
  return out;
}

}  // namespace reservoir::traces
