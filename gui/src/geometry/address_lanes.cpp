#include "geometry/address_lanes.h"

#include <algorithm>

namespace reservoir::gui {

AddressLanes stackAddresses(std::span<const std::pair<std::uint64_t, std::uint64_t>> ranges) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> r;
  for (const auto& [addr, size] : ranges)
    if (size > 0) r.emplace_back(addr, addr + size);
  std::sort(r.begin(), r.end());
  AddressLanes out;
  for (const auto& [lo, hi] : r) {
    if (!out.lanes.empty() && lo <= out.lanes.back().hi) {
      out.lanes.back().hi = std::max(out.lanes.back().hi, hi);
      continue;
    }
    out.lanes.push_back({lo, hi, 0});
  }
  for (auto& l : out.lanes) {
    l.offset = out.total;
    out.total += l.hi - l.lo;
  }
  return out;
}

std::optional<std::uint64_t> AddressLanes::position(std::uint64_t addr) const {
  auto it = std::upper_bound(lanes.begin(), lanes.end(), addr, [](std::uint64_t a, const Lane& l) { return a < l.lo; });
  if (it == lanes.begin()) return std::nullopt;
  --it;
  if (addr >= it->hi) return std::nullopt;
  return it->offset + (addr - it->lo);
}

std::optional<std::uint64_t> AddressLanes::address(std::uint64_t pos) const {
  if (pos >= total) return std::nullopt;
  auto it =
      std::upper_bound(lanes.begin(), lanes.end(), pos, [](std::uint64_t p, const Lane& l) { return p < l.offset; });
  --it;  // lanes[0].offset == 0 <= pos
  return it->lo + (pos - it->offset);
}

}  // namespace reservoir::gui
