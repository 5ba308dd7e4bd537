// A deterministic DeviceModel for unit tests: bump-pointer addresses, an optional capacity,
// and record_stream completions under the test's control.
#pragma once

#include <algorithm>
#include <set>
#include <vector>

#include "reservoir/simulator/allocator.h"

namespace reservoir::sim::test {

class TestDevice : public DeviceModel {
 public:
  ByteCount total = 150109880320ull;   // an H200
  ByteCount capacity = ~ByteCount{0};  // bytes the driver will hand out
  ByteCount in_use = 0;
  Addr next_addr = 0x7f0000000000ull;
  Addr next_va = 0x7e0000000000ull;
  std::set<std::uint64_t> completed_tags;  // record_stream'ed allocations whose GPU work is done

  ByteCount totalMemory() const override { return total; }
  std::optional<Addr> cudaMalloc(ByteCount size, StreamId) override {
    if (in_use + size > capacity) return std::nullopt;
    in_use += size;
    const Addr a = next_addr;
    next_addr += size;
    return a;
  }
  void cudaFree(Addr, ByteCount size) override { in_use -= size; }
  Addr reserveAddress(ByteCount size, ByteCount, StreamId) override {
    const Addr a = next_va;
    next_va += size;
    return a;
  }
  void releaseAddress(Addr, ByteCount) override {}
  bool mapPages(Addr, ByteCount size, StreamId) override {
    if (in_use + size > capacity) return false;
    in_use += size;
    return true;
  }
  void unmapPages(Addr, ByteCount size) override { in_use -= size; }
  ByteCount deviceFree() override { return capacity == ~ByteCount{0} ? total - in_use : capacity - in_use; }
  void pollEvents(std::span<const OutstandingEvent> outstanding, std::vector<std::size_t>& completed) override {
    for (std::size_t i = 0; i < outstanding.size(); ++i)
      if (completed_tags.count(outstanding[i].tag)) completed.push_back(i);
  }
  void syncOrder(std::span<const OutstandingEvent> outstanding, std::vector<std::size_t>& order) override {
    for (std::size_t i = 0; i < outstanding.size(); ++i) order.push_back(i);
  }
};

class RecordingSink : public EventSink {
 public:
  std::vector<SimEvent> events;
  void onEvent(const SimEvent& e) override { events.push_back(e); }
  [[nodiscard]] std::size_t count(Action a) const {
    return static_cast<std::size_t>(
        std::count_if(events.begin(), events.end(), [a](const SimEvent& e) { return e.action == a; }));
  }
};

}  // namespace reservoir::sim::test
