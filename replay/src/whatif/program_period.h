// Where a program repeats itself: training steps that make the same requests in the same order
// (sizes, streams, deferred frees), one step's allocations after the last's. A
// replay whose state repeats from one step to the next (run_engine's repeat skipping) can then go
// on whole steps at a time.
#pragma once

#include <cstdint>

#include "reservoir/replay/program.h"

namespace reservoir::replay::detail {

struct ProgramPeriod {
  std::uint32_t start = 0;   // the first op of the first period
  std::uint32_t ops = 0;     // ops per period; 0: the program shows none
  std::uint32_t end = 0;     // ops[j + ops] is ops[j] one period on, for every j in [start, end - ops)
  std::uint64_t allocs = 0;  // allocation ids per period
  [[nodiscard]] bool found() const { return ops > 0; }
};

// Whether op `b` is op `a` one period on: the same request, its allocation `allocs` ids later,
// its deferred free completing `ops` ops later.
bool repeatsOp(const Program& program, const Op& a, const Op& b, std::uint32_t ops, std::uint64_t allocs);

// The program's period: found around three quarters into the program and kept when it holds
// for at least four periods and a quarter of the ops.
ProgramPeriod findProgramPeriod(const Program& program);

}  // namespace reservoir::replay::detail
