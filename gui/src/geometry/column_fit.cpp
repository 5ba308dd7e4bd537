#include "geometry/column_fit.h"

#include <algorithm>
#include <numeric>

namespace reservoir::gui {

std::vector<int> fitColumns(const std::vector<int>& wanted, int room, int floor) {
  const long total = std::accumulate(wanted.begin(), wanted.end(), 0L);
  if (total <= room) return wanted;
  // Water level: the largest cap with sum(min(w, cap)) <= room. Columns sorted narrowest first;
  // the k narrowest keep their width and the rest share what is left equally.
  std::vector<int> sorted(wanted);
  std::sort(sorted.begin(), sorted.end());
  long kept = 0;
  int cap = floor;
  for (std::size_t k = 0; k < sorted.size(); ++k) {
    const long rest = static_cast<long>(sorted.size() - k);
    const long level = (room - kept) / rest;
    if (level < sorted[k]) {
      cap = static_cast<int>(std::max<long>(level, floor));
      break;
    }
    kept += sorted[k];
  }
  std::vector<int> out(wanted.size());
  for (std::size_t i = 0; i < wanted.size(); ++i) out[i] = std::min(wanted[i], cap);  // cap >= floor
  return out;
}

}  // namespace reservoir::gui
