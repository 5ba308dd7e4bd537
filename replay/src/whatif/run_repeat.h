// What a run keeps to notice that its state repeats from one period of the program to the next
// (Runner::skipRepeats): the state at the last period boundary, when the cheap figures there were
// those of the boundary before, and the reserved bytes after each op since.
#pragma once

#include <optional>
#include <vector>

#include "whatif/device_models.h"
#include "whatif/program_period.h"

namespace reservoir::replay::detail {

struct RepeatWatch {
  const ProgramPeriod* period = nullptr;
  std::uint32_t next_boundary = 0;
  // Figures that differ between boundaries whose states differ, mostly (checked first: a full
  // copy of the state is kept only once they are the same twice in a row).
  struct Figures {
    sim::StatTotals totals;
    std::size_t outstanding = 0;
    sim::ByteCount used = 0;
    bool operator==(const Figures& o) const {
      return totals.reserved == o.totals.reserved && totals.allocated == o.totals.allocated &&
             totals.active == o.totals.active && totals.requested == o.totals.requested &&
             outstanding == o.outstanding && used == o.used;
    }
  };
  std::optional<Figures> last;
  // The run at the last boundary (a model copy that never runs again: it is compared with).
  struct Earlier {
    sim::CachingAllocator model;
    WhatIfDevice device;
    std::vector<sim::BlockHandle> slot_block;
    std::vector<std::uint32_t> slot_alloc;
    std::size_t empty_cache_calls = 0;
    std::uint64_t mallocs = 0;
    std::size_t next_item = 0;
  };
  std::optional<Earlier> earlier;
  std::vector<std::int64_t> reserved;  // after each op since the last boundary
};

}  // namespace reservoir::replay::detail
