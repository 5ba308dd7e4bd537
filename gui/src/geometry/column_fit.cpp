#include "geometry/column_fit.h"

#include <algorithm>

namespace reservoir::gui {

namespace {

std::vector<int> capped(const std::vector<int>& wanted, const std::vector<int>& floors, int cap) {
  std::vector<int> out(wanted.size());
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    const int floor = i < floors.size() ? std::min(floors[i], wanted[i]) : 0;
    out[i] = std::min(wanted[i], std::max(floor, cap));
  }
  return out;
}

long total(const std::vector<int>& w) {
  long s = 0;
  for (int x : w) s += x;
  return s;
}

}  // namespace

std::vector<int> fitColumns(const std::vector<int>& wanted, const std::vector<int>& floors, int room) {
  if (total(wanted) <= room) return wanted;
  // The largest cap that fits (the sum grows with the cap): a binary search over [0, widest].
  int lo = 0;
  int hi = wanted.empty() ? 0 : *std::max_element(wanted.begin(), wanted.end());
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (total(capped(wanted, floors, mid)) <= room)
      lo = mid;
    else
      hi = mid - 1;
  }
  return capped(wanted, floors, lo);
}

}  // namespace reservoir::gui
