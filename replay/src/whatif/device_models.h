// The device in what-if mode: models of what a recording can no longer tell once the
// program is edited. Addresses: recorded ones where the same segment is made again, a
// driver-like placement otherwise. Capacity: a usable byte budget for cudaMalloc and page
// mapping. Completion: record_stream work finishes where it did in the recording (an
// inserted empty_cache synchronizes and retires everything earlier).
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "reservoir/replay/whatif.h"
#include "whatif/driver_chunks.h"

namespace reservoir::replay::detail {

using sim::Addr;
using sim::ByteCount;

class WhatIfDevice final : public sim::DeviceModel {
 public:
  WhatIfDevice(const PreparedTrace& prepared, AddressModel model, std::optional<ByteCount> usable);

  void setCurrentOp(std::uint32_t op) { current_op_ = op; }
  [[nodiscard]] ByteCount used() const { return used_; }
  [[nodiscard]] std::optional<ByteCount> usable() const { return usable_; }
  [[nodiscard]] const DriverWork& work() const { return work_; }

  [[nodiscard]] ByteCount totalMemory() const override { return total_; }
  std::optional<Addr> cudaMalloc(ByteCount size, sim::StreamId stream) override;
  void cudaFree(Addr addr, ByteCount size) override;
  Addr reserveAddress(ByteCount size, ByteCount page, sim::StreamId stream) override;
  void releaseAddress(Addr addr, ByteCount size) override;
  bool mapPages(Addr addr, ByteCount size, sim::StreamId stream) override;
  void unmapPages(Addr addr, ByteCount size) override;
  ByteCount deviceFree() override;
  void pollEvents(std::span<const sim::OutstandingEvent> outstanding, std::vector<std::size_t>& completed) override;
  void syncOrder(std::span<const sim::OutstandingEvent> outstanding, std::vector<std::size_t>& order) override;

  // A periodic run (run_repeat.cpp). Whether every cudaMalloc now goes where the driver model
  // puts it (no recorded address is followed any more), which depends on what is handed out
  // only through order and offsets within the driver's chunks.
  [[nodiscard]] bool placesByDriverModel() const;
  [[nodiscard]] Addr floor() const { return floor_; }
  // How the addresses moved since `earlier` (one period before): the floor's step lower for every
  // range below the lowest one that stayed, the rest where they were (and the driver's chunks
  // alike); nullopt when they moved otherwise.
  [[nodiscard]] std::optional<sim::AddressStep> addressStepSince(const WhatIfDevice& earlier) const;
  // The device `periods` such steps on (the counts grown as from `earlier` to now each period).
  void advance(const WhatIfDevice& earlier, const sim::AddressStep& a, std::uint64_t periods);

 private:
  [[nodiscard]] bool overlaps(Addr addr, ByteCount size) const { return overlapStart(addr, size).has_value(); }
  // The lowest start of a live range that [addr, addr + size) overlaps.
  [[nodiscard]] std::optional<Addr> overlapStart(Addr addr, ByteCount size) const;
  Addr driverPlacement(ByteCount size, ByteCount align);
  // A cudaMalloc the recording cannot place: the lowest free room in a chunk's unused end, or
  // a new chunk below everything (driver_chunks.h).
  Addr chunkPlacement(ByteCount size);
  // The anchored model: the recorded address of this cudaMalloc while the run agrees with the
  // recording; the first op that departs ends the agreement (driver placement from then on).
  std::optional<Addr> anchoredAddress(ByteCount size);
  void anchoredFree(Addr addr);
  void departFromRecording();
  [[nodiscard]] std::optional<Addr> afterThePrevious(ByteCount size) const;
  struct Placed {
    Addr addr;
    ByteCount size;
  };
  std::size_t mallocs_ = 0;  // the edited run's cudaMallocs so far (anchored), and the last one
  Placed last_malloc_{0, 0};
  [[nodiscard]] bool recordedReservations() const {
    return model_ == AddressModel::kRecorded || (model_ == AddressModel::kAnchored && !departed_);
  }
  [[nodiscard]] std::uint32_t completionOf(std::uint64_t tag) const;

  ByteCount total_;
  AddressModel model_;
  std::optional<ByteCount> usable_;
  ByteCount used_ = 0;
  std::uint32_t current_op_ = 0;
  // Per size, the recording's cudaMalloc addresses not handed out yet (an index into
  // prepared.recorded_segments_by_size and which entries are taken).
  struct SizeCursor {
    std::size_t next = 0;
    std::vector<bool> taken;
  };
  const PreparedTrace* prepared_;
  std::map<ByteCount, SizeCursor> cursors_;
  std::deque<Addr> recorded_reservations_;
  std::map<Addr, ByteCount> live_;  // segments and reservations handed out
  DriverChunks chunks_;             // the driver's VA chunks and the free room at their ends
  Addr floor_ = 0;                  // driver placement grows down from here
  // The anchored model: the next recorded segment event to agree with, whether the run has
  // departed from the recording, and the lowest address handed out until then.
  std::size_t anchor_ = 0;
  bool departed_ = false;
  Addr anchor_floor_ = 0;
  // What the last pollEvents saw when it completed nothing: the list's size and the sequences of
  // its first and last events, the streams whose first event is pending and the earliest op at
  // which one of those completes.
  struct PollState {
    bool valid = false;
    std::size_t size = 0;
    std::uint64_t first = 0, last = 0;
    std::vector<sim::StreamId> blocked;
    std::uint32_t earliest = kNoOp;
    [[nodiscard]] bool resumable(std::span<const sim::OutstandingEvent> outstanding) const;
    void remember(std::span<const sim::OutstandingEvent> outstanding, bool none_completed);
  };
  PollState poll_;
  DriverWork work_;  // what the allocator asked of the driver (the price model's counts)
};

}  // namespace reservoir::replay::detail
