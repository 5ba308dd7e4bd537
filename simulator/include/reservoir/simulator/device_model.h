// What the allocator model cannot know by itself, behind one interface: the driver's
// answers (cudaMalloc addresses and whether they succeed, virtual address reservations and
// page mapping, free device memory) and when GPU work behind record_stream completes.
//
// Conformance mode plugs in an oracle that reads the recorded trace; what-if mode plugs in
// explicit models (replay/). Event completion follows the allocator's per-stream FIFO.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "reservoir/simulator/sizes.h"

namespace reservoir::sim {

using StreamId = std::uint64_t;  // the recorded cudaStream_t value; 0 = default stream

// A CUDA event recorded on `stream` when a block used there was freed (record_stream).
struct OutstandingEvent {
  StreamId stream = 0;  // the stream the event was recorded on
  StreamId block_stream = 0;
  Addr block_addr = 0;
  std::uint64_t tag = 0;       // the allocation's tag (see CachingAllocator::malloc)
  std::uint64_t sequence = 0;  // global order of recording
};

class DeviceModel {
 public:
  virtual ~DeviceModel() = default;

  // totalGlobalMem: sizes the memory fraction and expandable reservations.
  [[nodiscard]] virtual ByteCount totalMemory() const = 0;
  // cudaMalloc(size) for a new segment; nullopt means cudaErrorMemoryAllocation.
  virtual std::optional<Addr> cudaMalloc(ByteCount size, StreamId stream) = 0;
  virtual void cudaFree(Addr addr, ByteCount size) = 0;
  // cuMemAddressReserve for a new expandable segment of `size` bytes.
  virtual Addr reserveAddress(ByteCount size, ByteCount page, StreamId stream) = 0;
  virtual void releaseAddress(Addr addr, ByteCount size) = 0;
  // cuMemCreate + cuMemMap of [addr, addr+size); false means out of memory (nothing mapped).
  virtual bool mapPages(Addr addr, ByteCount size, StreamId stream) = 0;
  virtual void unmapPages(Addr addr, ByteCount size) = 0;
  // cudaMemGetInfo's free bytes (recorded in `oom` events).
  virtual ByteCount deviceFree() = 0;

  // process_events(): the outstanding events that have completed, as indices into
  // `outstanding`, in the order the allocator retires them.
  virtual void pollEvents(std::span<const OutstandingEvent> outstanding, std::vector<std::size_t>& completed) = 0;
  // synchronize_and_free_events(): every outstanding event completes; the retirement order.
  virtual void syncOrder(std::span<const OutstandingEvent> outstanding, std::vector<std::size_t>& order) = 0;
};

}  // namespace reservoir::sim
