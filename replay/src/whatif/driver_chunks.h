// The driver's virtual-address chunks, as recordings show them (docs/whatif.md, "Where the
// driver puts a segment"): a cudaMalloc that starts a chunk takes a 32 MiB-aligned range of
// whole 32 MiB granules, and the room its segment leaves at the chunk's end goes, lowest
// address first, to later cudaMallocs that fit there. What-if mode asks it where a segment
// goes once the edited run no longer follows the recording's addresses.
#pragma once

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "reservoir/simulator/device_model.h"
#include "reservoir/simulator/repeat.h"

namespace reservoir::replay::detail {

// The first range of `live` (address -> size, none overlapping another) that [addr, addr + size)
// overlaps, the lowest one: its start and size.
[[nodiscard]] std::optional<std::pair<sim::Addr, sim::ByteCount>> firstOverlap(
    const std::map<sim::Addr, sim::ByteCount>& live, sim::Addr addr, sim::ByteCount size);

class DriverChunks {
 public:
  static constexpr sim::ByteCount kGranule = 32ull << 20;
  static constexpr sim::ByteCount kPage = 2ull << 20;

  // The lowest address in a chunk's free room where `size` bytes fit and overlap none of
  // `live` (address -> size: every segment handed out).
  [[nodiscard]] std::optional<sim::Addr> fit(sim::ByteCount size, const std::map<sim::Addr, sim::ByteCount>& live) const;
  // A segment made at addr: in a chunk's free room it takes its part; at a granule boundary
  // outside every chunk it starts a chunk.
  void taken(sim::Addr addr, sim::ByteCount size);
  // A segment given back: a chunk's first segment takes its chunk with it; one in a chunk's
  // end gives its room back.
  void given(sim::Addr addr, sim::ByteCount size);

  // A periodic run's step: whether these chunks and their room are `earlier`'s moved as `a` says,
  // and these chunks `periods` such steps on.
  [[nodiscard]] bool sameMoved(const DriverChunks& earlier, const sim::AddressStep& a) const;
  void move(const sim::AddressStep& a, std::uint64_t periods);

  [[nodiscard]] std::size_t chunkCount() const { return chunks_.size(); }
  [[nodiscard]] sim::ByteCount roomBytes() const;

 private:
  void carve(sim::Addr from, sim::Addr to);
  void addRoom(sim::Addr from, sim::Addr to);
  [[nodiscard]] std::map<sim::Addr, sim::Addr>::const_iterator chunkHolding(sim::Addr addr) const;

  struct Room {
    sim::Addr start = 0;
    sim::Addr end = 0;
  };
  // Where room starts at or after `addr` (the first such room).
  [[nodiscard]] std::vector<Room>::iterator roomFrom(sim::Addr addr);

  std::map<sim::Addr, sim::Addr> chunks_;  // first address -> end
  // Free room at chunks' ends, by address: a few dozen ranges that fit() walks on every
  // cudaMalloc of an edited run, so they lie side by side rather than in a tree's nodes.
  std::vector<Room> room_;
};

}  // namespace reservoir::replay::detail
