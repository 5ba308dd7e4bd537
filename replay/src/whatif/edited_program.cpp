#include "reservoir/replay/edited_program.h"

#include <algorithm>
#include <set>

#include "whatif/run_engine.h"  // detail::kindOrder: the order the runner applies items in

namespace reservoir::replay {

std::string_view backendOpName(BackendOpKind kind) {
  switch (kind) {
    case BackendOpKind::kMalloc: return "malloc";
    case BackendOpKind::kFree: return "free";
    case BackendOpKind::kEmptyCache: return "empty_cache";
    case BackendOpKind::kProbe: return "probe";
    case BackendOpKind::kResetPeaks: return "reset_peaks";
    case BackendOpKind::kDemand: return "demand";
  }
  return "?";
}

namespace {

// One edit item in a gap, ordered as the what-if runner orders them (whatif_runner.cpp).
struct Item {
  std::uint32_t op;
  Gap gap;
  int order;
  std::int32_t edit;
};

}  // namespace

EditedProgram flattenProgram(const PreparedTrace& prepared, const std::vector<ResolvedEdit>& edits) {
  const Program& program = prepared.program;
  EditedProgram out;
  out.program_ops = program.ops.size();
  out.seed = program.seed;
  out.private_pools = program.private_pools;
  for (const AllocationId id : program.seed_allocations)
    out.seed_allocations.push_back(id.valid() ? id.value() : kNoAllocation);

  std::vector<Item> items;
  OpBoundaryCursor at(program);
  for (std::size_t e = 0; e < edits.size(); ++e) {
    out.edits.push_back(edits[e].edit.text);
    for (const Gap& g : edits[e].gaps)
      items.push_back(Item{at.at(g.boundary), g, detail::kindOrder(edits[e].edit.kind),
                           static_cast<std::int32_t>(e)});
  }
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    if (a.op != b.op) return a.op < b.op;
    if (a.gap.boundary != b.gap.boundary) return a.gap.boundary < b.gap.boundary;
    if (a.gap.phase != b.gap.phase) return a.gap.phase < b.gap.phase;
    return a.order < b.order;
  });

  // Live allocations as the ops go by (for releases): a release frees what is live there.
  std::set<std::uint32_t> live;
  for (const std::uint32_t id : out.seed_allocations)
    if (id != kNoAllocation) live.insert(id);
  std::set<std::uint32_t> released;
  std::set<sim::StreamId> streams;

  std::vector<std::optional<StackMatcher>> matchers(edits.size());
  auto stackOf = [&](std::uint32_t id) {
    return prepared.allocationStack(id);
  };

  auto emitItem = [&](const Item& item) {
    const Edit& e = edits[static_cast<std::size_t>(item.edit)].edit;
    BackendOp b;
    b.edit = item.edit;
    b.boundary = item.gap.boundary;
    switch (e.kind) {
      case Edit::Kind::kCleanup:
        b.kind = BackendOpKind::kEmptyCache;
        ++out.cleanups;
        out.ops.push_back(b);
        return;
      case Edit::Kind::kProbe: b.kind = BackendOpKind::kProbe; break;
      case Edit::Kind::kResetPeaks: b.kind = BackendOpKind::kResetPeaks; break;
      case Edit::Kind::kDemand:
        b.kind = BackendOpKind::kDemand;
        b.size = e.bytes;
        break;
      case Edit::Kind::kRelease: {
        auto& m = matchers[static_cast<std::size_t>(item.edit)];
        if (!m) m.emplace(*prepared.snapshot, *e.selector);
        std::vector<std::uint32_t> ids;
        for (const std::uint32_t id : live)
          if (m->matches(stackOf(id))) ids.push_back(id);  // std::set: allocation order
        for (const std::uint32_t id : ids) {
          BackendOp f = b;
          f.kind = BackendOpKind::kFree;
          f.alloc = id;
          out.ops.push_back(f);
          ++out.frees;
          live.erase(id);
          released.insert(id);
        }
        return;
      }
    }
    out.ops.push_back(b);
  };

  std::size_t next_item = 0;
  const auto n = static_cast<std::uint32_t>(program.ops.size());
  for (std::uint32_t j = 0; j <= n; ++j) {
    while (next_item < items.size() && items[next_item].op == j) emitItem(items[next_item++]);
    if (j == n) break;
    const Op& op = program.ops[j];
    BackendOp b;
    b.op = j;
    switch (op.kind) {
      case OpKind::kMalloc:
        b.kind = BackendOpKind::kMalloc;
        b.alloc = op.alloc.valid() ? op.alloc.value() : kNoAllocation;
        b.size = op.size;
        b.stream = streamOf(program, op);
        b.pool = routeOf(program, op).pool;
        b.restore_at = routeOf(program, op).restore_at;
        b.recorded_oom = op.recorded_oom;
        streams.insert(b.stream);
        ++out.mallocs;
        if (b.alloc != kNoAllocation) live.insert(b.alloc);
        break;
      case OpKind::kFree:
        if (!op.alloc.valid() || released.count(op.alloc.value()) != 0) continue;  // freed by a release
        b.kind = BackendOpKind::kFree;
        b.alloc = op.alloc.value();
        b.stream = streamOf(program, op);
        b.deferred = op.deferred;
        b.completes_at = completesAt(op);
        ++out.frees;
        if (op.deferred) ++out.deferred_frees;
        live.erase(b.alloc);
        break;
      case OpKind::kEmptyCache:
        b.kind = BackendOpKind::kEmptyCache;
        b.pool = routeOf(program, op).pool;
        b.pool_only = routeOf(program, op).pool_only;
        ++out.empty_caches;
        break;
    }
    out.ops.push_back(b);
  }
  for (const auto& s : out.seed) streams.insert(s.stream);
  out.streams.assign(streams.begin(), streams.end());
  return out;
}

EditedProgram EditedProgram::withoutSeed() const {
  EditedProgram out = *this;
  out.seed.clear();
  out.seed_allocations.clear();
  std::vector<bool> made;
  out.ops.clear();
  out.frees = out.deferred_frees = 0;
  for (const BackendOp& op : ops) {
    if (op.kind == BackendOpKind::kMalloc && op.alloc != kNoAllocation) {
      if (made.size() <= op.alloc) made.resize(op.alloc + 1u, false);
      made[op.alloc] = true;
    }
    if (op.kind == BackendOpKind::kFree && (op.alloc >= made.size() || !made[op.alloc])) continue;
    if (op.kind == BackendOpKind::kFree) {
      ++out.frees;
      if (op.deferred) ++out.deferred_frees;
    }
    out.ops.push_back(op);
  }
  return out;
}

}  // namespace reservoir::replay
