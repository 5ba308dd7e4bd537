// The recorded trace as the model's oracle (conformance mode) and as the yardstick its
// emitted events are compared with, one by one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reservoir/simulator/allocator.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::replay::detail {

using sim::Addr;
using sim::ByteCount;
using sim::StreamId;

class RecordedOracle final : public sim::DeviceModel, public sim::EventSink {
 public:
  // `snapshot`'s events of one device (`recorded`): the snapshot gives their streams and the words.
  RecordedOracle(const traces::Snapshot& snapshot, const std::vector<traces::TraceEvent>& recorded,
                 ByteCount total_memory)
      : snap_(snapshot), rec_(recorded), total_(total_memory) {}

  // --- the comparison
  std::size_t pos = 0;             // next recorded event to match
  std::vector<Addr> reservations;  // bases handed out by reserveAddress, in order
  std::size_t compared = 0;        // events matched so far
  bool failed = false;
  std::size_t fail_index = 0;
  std::string fail_expected, fail_simulated;
  std::optional<sim::SimEvent> last_failed_event;
  void onEvent(const sim::SimEvent& e) override;
  void failHere(std::string expected, std::string simulated);

  // --- what the model asks the driver
  [[nodiscard]] ByteCount totalMemory() const override { return total_; }
  std::optional<Addr> cudaMalloc(ByteCount size, StreamId stream) override;
  void cudaFree(Addr, ByteCount) override {}
  Addr reserveAddress(ByteCount size, ByteCount page, StreamId stream) override;
  void releaseAddress(Addr, ByteCount) override {}
  bool mapPages(Addr addr, ByteCount size, StreamId stream) override;
  void unmapPages(Addr, ByteCount) override {}
  ByteCount deviceFree() override;
  void pollEvents(std::span<const sim::OutstandingEvent> outstanding, std::vector<std::size_t>& completed) override;
  void syncOrder(std::span<const sim::OutstandingEvent> outstanding, std::vector<std::size_t>& order) override;

 private:
  [[nodiscard]] const traces::TraceEvent* next() const { return pos < rec_.size() ? &rec_[pos] : nullptr; }
  // The recorded free_completed run at `pos` that retires outstanding events, in order.
  void recordedCompletions(std::span<const sim::OutstandingEvent> outstanding, std::vector<std::size_t>& out,
                           std::vector<bool>& taken) const;

  const traces::Snapshot& snap_;
  const std::vector<traces::TraceEvent>& rec_;
  ByteCount total_;
  Addr provisional_va_ = 0x100000000000ull;
};

}  // namespace reservoir::replay::detail
