#include "whatif/program_period.h"

#include <algorithm>

namespace reservoir::replay::detail {
namespace {

constexpr std::uint32_t kWindow = 16;        // ops compared before a distance is verified
constexpr std::size_t kCandidates = 64;      // distances verified at most
constexpr std::uint32_t kMinimumOps = 4096;  // programs shorter than this are replayed whole

// The same request, allocations and completions apart (and handle slots: a run finds an
// allocation's slot from its malloc, Runner::skipRepeatedPeriods).
bool sameShape(const Op& a, const Op& b) {
  return a.kind == b.kind && a.deferred == b.deferred && a.recorded_oom == b.recorded_oom &&
         a.stream_entry == b.stream_entry && a.size == b.size && (a.kind == OpKind::kFree || a.link == b.link);
}

// Allocation ids a period apart at `from`: the first malloc's, ops `ops` apart.
std::optional<std::uint64_t> allocStep(const Program& p, std::uint32_t from, std::uint32_t ops) {
  for (std::uint32_t j = from; j + ops < p.ops.size() && j < from + ops; ++j) {
    const Op& a = p.ops[j];
    const Op& b = p.ops[j + ops];
    if (a.kind == OpKind::kMalloc && a.alloc.valid() && b.alloc.valid() && b.alloc.value() > a.alloc.value())
      return b.alloc.value() - a.alloc.value();
  }
  return std::nullopt;
}

// The ops [start, end) over which every op is the one `ops` before it one period on, around `at`.
ProgramPeriod regionAround(const Program& p, std::uint32_t at, std::uint32_t ops, std::uint64_t allocs) {
  const auto repeats = [&](std::uint32_t i) { return repeatsOp(p, p.ops[i], p.ops[i + ops], ops, allocs); };
  const auto n = static_cast<std::uint32_t>(p.ops.size());
  std::uint32_t lo = at, hi = at;
  while (lo > 0 && repeats(lo - 1)) --lo;
  while (hi + ops < n && repeats(hi)) ++hi;
  return ProgramPeriod{lo, ops, hi + ops, allocs};
}

}  // namespace

bool repeatsOp(const Program& program, const Op& a, const Op& b, std::uint32_t ops, std::uint64_t allocs) {
  if (!sameShape(a, b)) return false;
  if (a.alloc.valid() != b.alloc.valid() || (a.alloc.valid() && b.alloc.value() != a.alloc.value() + allocs))
    return false;
  if (a.kind == OpKind::kFree) {
    const std::uint32_t ca = completesAt(a), cb = completesAt(b);
    return ca == kNoOp ? cb == kNoOp : cb != kNoOp && cb == ca + ops;
  }
  const OpRoute& route = routeOf(program, a);  // no private pool, no checkpoint restore at an address
  return !route.pool && !route.restore_at && !route.pool_only;
}

ProgramPeriod findProgramPeriod(const Program& p) {
  const auto n = static_cast<std::uint32_t>(p.ops.size());
  if (n < kMinimumOps) return {};
  const std::uint32_t r = n / 4 * 3;
  std::size_t tried = 0;
  for (std::uint32_t j = r; j-- > 0 && tried < kCandidates;) {
    bool same = r + kWindow <= n;
    for (std::uint32_t k = 0; same && k < kWindow; ++k) same = sameShape(p.ops[j + k], p.ops[r + k]);
    if (!same) continue;
    ++tried;
    const std::uint32_t ops = r - j;
    const auto allocs = allocStep(p, j, ops);
    if (!allocs) continue;
    const ProgramPeriod found = regionAround(p, j, ops, *allocs);
    const std::uint32_t length = found.end - found.start;
    if (length >= 4 * ops && length >= n / 4) return found;
  }
  return {};
}

}  // namespace reservoir::replay::detail
