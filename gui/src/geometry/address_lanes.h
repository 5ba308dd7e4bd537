// The segment timeline's vertical axis: every address range ever reserved gets a fixed place,
// stacked in address order with the unreserved address space between ranges taken out, so a
// segment keeps its height band over its whole life. Ranges that touch or overlap (the pages
// mapped in one expandable segment) share one lane.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace reservoir::gui {

struct AddressLanes {
  struct Lane {
    std::uint64_t lo = 0, hi = 0;  // addresses [lo, hi)
    std::uint64_t offset = 0;      // stacked bytes below the lane
  };
  std::vector<Lane> lanes;  // by address
  std::uint64_t total = 0;  // stacked bytes of all lanes

  // The stacked position (bytes from the bottom) of `addr`; none outside every lane.
  [[nodiscard]] std::optional<std::uint64_t> position(std::uint64_t addr) const;
  // The address at stacked position `pos` (< total); none past the top.
  [[nodiscard]] std::optional<std::uint64_t> address(std::uint64_t pos) const;
};

// Lanes for the ranges (address, size), in any order; empty ranges are left out.
AddressLanes stackAddresses(std::span<const std::pair<std::uint64_t, std::uint64_t>> ranges);

}  // namespace reservoir::gui
