// A hint that a large array about to be filled be backed by 2 MiB pages: fewer page faults and
// TLB misses for the trace's columns (where transparent huge pages are "madvise").
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

namespace reservoir::traces::detail {

inline void adviseHugePages(const void* data, std::size_t bytes) {
  constexpr std::uintptr_t kHuge = 2u << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1);
  const std::uintptr_t last = (begin + bytes) & ~(kHuge - 1);
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);  // a hint only
}

}  // namespace reservoir::traces::detail
