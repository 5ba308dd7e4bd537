#include "reservoir/replay/program.h"

#include <algorithm>

namespace reservoir::replay {

using traces::Action;

std::uint16_t internStream(Program& p, sim::StreamId stream) {
  // A trace has a handful of streams, the default one nearly always: a scan is enough, and a
  // map takes over where a hostile trace names thousands.
  constexpr std::size_t kScanned = 16;
  if (p.streams.size() <= kScanned) {
    for (std::size_t k = 0; k < p.streams.size(); ++k)
      if (p.streams[k] == stream) return static_cast<std::uint16_t>(k);
  } else if (const auto it = p.stream_lookup.find(stream); it != p.stream_lookup.end()) {
    return it->second;
  }
  if (p.streams.size() >= kMaxStreamEntries) {
    ++p.streams_refused;
    return 0;
  }
  p.streams.push_back(stream);
  if (p.streams.size() > kScanned) {
    if (p.stream_lookup.empty())
      for (std::size_t k = 0; k < p.streams.size(); ++k)
        p.stream_lookup.emplace(p.streams[k], static_cast<std::uint16_t>(k));
    else
      p.stream_lookup.emplace(stream, static_cast<std::uint16_t>(p.streams.size() - 1));
  }
  return static_cast<std::uint16_t>(p.streams.size() - 1);
}

AllocationStacks AllocationStacks::copiedFrom(const traces::RequestStream& stream) {
  std::vector<StackId> stacks;
  stacks.reserve(stream.allocations.size());
  for (const auto& a : stream.allocations) stacks.push_back(a.stack);
  return AllocationStacks(std::move(stacks));
}

AllocationStacks AllocationStacks::sharedWith(std::shared_ptr<const traces::RequestStream> stream) {
  AllocationStacks out;
  out.shared_ = std::move(stream);
  return out;
}

StackId opStack(const Op& op, const traces::DeviceTrace& trace, const AllocationStacks& allocation_stacks) {
  if (op.kind == OpKind::kEmptyCache) return StackId(0);
  if (op.kind == OpKind::kFree && op.alloc.valid()) return allocation_stacks[op.alloc.value()];
  const Action own = op.kind == OpKind::kFree ? Action::kFreeRequested : Action::kAlloc;
  const std::size_t end = std::min<std::size_t>(op.end_event, trace.events.size());
  for (std::size_t e = op.first_event; e < end; ++e) {
    const Action a = trace.events[e].action;
    if (a == own || (op.kind == OpKind::kMalloc && a == Action::kOom)) return trace.events[e].stack;
  }
  return StackId(0);
}

std::uint32_t internRoute(Program& p, const OpRoute& route) {
  if (!route.pool && !route.restore_at) return 0;
  // Pool-only routes are a handful (one per private pool): look them up; each restore is its own.
  if (!route.restore_at)
    for (std::size_t i = 1; i < p.routes.size(); ++i)
      if (p.routes[i] == route) return static_cast<std::uint32_t>(i);
  p.routes.push_back(route);
  return static_cast<std::uint32_t>(p.routes.size() - 1);
}

namespace {

// The slots of `program`'s seeds and count in `out`; each op's slot to `set(j, slot)`.
template <typename SetOp>
void walkHandleSlots(const Program& program, std::size_t allocations, HandleSlots& out, SetOp set) {
  std::vector<std::uint32_t> current(allocations, HandleSlots::kNone);  // the slot each live allocation holds
  std::vector<std::uint32_t> given_back;
  auto take = [&] {
    if (given_back.empty()) return out.count++;
    const std::uint32_t s = given_back.back();
    given_back.pop_back();
    return s;
  };
  // A malloc of an allocation already live keeps its slot (a map set twice keeps one entry).
  auto hold = [&](AllocationId id) {
    if (!id.valid() || id.value() >= allocations) return HandleSlots::kNone;
    std::uint32_t& s = current[id.value()];
    if (s == HandleSlots::kNone) s = take();
    return s;
  };
  out.seed.reserve(program.seed_allocations.size());
  for (const AllocationId id : program.seed_allocations) out.seed.push_back(hold(id));
  for (std::size_t j = 0; j < program.ops.size(); ++j) {
    const Op& op = program.ops[j];
    std::uint32_t slot = HandleSlots::kNone;
    if (op.kind == OpKind::kMalloc) {
      slot = hold(op.alloc);
    } else if (op.kind == OpKind::kFree && op.alloc.valid() && op.alloc.value() < allocations) {
      std::uint32_t& s = current[op.alloc.value()];
      slot = s;
      if (s != HandleSlots::kNone) given_back.push_back(s);
      s = HandleSlots::kNone;
    }
    set(j, slot);
  }
}

}  // namespace

HandleSlots computeHandleSlots(const Program& program, std::size_t allocations) {
  HandleSlots out;
  out.op.assign(program.ops.size(), HandleSlots::kNone);
  walkHandleSlots(program, allocations, out, [&](std::size_t j, std::uint32_t slot) { out.op[j] = slot; });
  return out;
}

// Straight into the ops: no vector per op beside them (4 bytes per op at 20 M events).
void assignHandleSlots(Program& program, std::size_t allocations) {
  HandleSlots s;
  walkHandleSlots(program, allocations, s, [&](std::size_t j, std::uint32_t slot) { program.ops[j].slot = slot; });
  s.assigned_ops = program.ops.size();
  program.handle_slots = std::move(s);
}

bool hasHandleSlots(const Program& program) {
  return program.handle_slots.assigned_ops == program.ops.size() && program.handle_slots.seed.size() == program.seed_allocations.size();
}

std::uint32_t opAtBoundary(const Program& p, std::size_t boundary) {
  return static_cast<std::uint32_t>(OpFirstEvents(p.ops).lowerBound(boundary));
}

std::uint32_t OpBoundaryCursor::at(std::size_t boundary) {
  if (boundary < boundary_) pos_ = 0;  // the ops before pos_ start before every boundary from here on
  boundary_ = boundary;
  pos_ = ops_.lowerBound(boundary, pos_);  // galloping from the last answer
  return static_cast<std::uint32_t>(pos_);
}

namespace {

bool isLead(Action a) {
  return a == Action::kFreeCompleted || a == Action::kSegmentFree || a == Action::kSegmentUnmap ||
         a == Action::kSegmentAlloc || a == Action::kSegmentMap;
}

}  // namespace

void appendStructurally(const traces::Snapshot& snapshot, const traces::DeviceTrace& trace,
                        const traces::RequestStream& req, std::size_t from, Program& program) {
  const std::size_t n = trace.events.size();
  std::vector<std::uint32_t> free_op(req.allocations.size(), kNoOp);
  for (std::uint32_t j = 0; j < program.ops.size(); ++j)
    if (program.ops[j].kind == OpKind::kFree && program.ops[j].alloc.valid()) free_op[program.ops[j].alloc.value()] = j;
  auto note_completions = [&](std::size_t a, std::size_t b, std::uint32_t op) {
    for (std::size_t i = a; i < b; ++i) {
      if (trace.events[i].action != Action::kFreeCompleted) continue;
      const AllocationId id = req.event_allocation[i];
      if (id.valid() && free_op[id.value()] != kNoOp && program.ops[free_op[id.value()]].deferred)
        program.ops[free_op[id.value()]].link = op;  // its completion
    }
  };
  std::size_t pos = from;
  while (pos < n) {
    const traces::TraceEvent& e = trace.events[pos];
    const auto op_index = static_cast<std::uint32_t>(program.ops.size());
    if (e.action == Action::kFreeRequested) {
      Op op = makeOp(OpKind::kFree, static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(pos + 1));
      op.alloc = req.event_allocation[pos];
      op.stream_entry = internStream(program, snapshot.stream(e));
      op.deferred = op.alloc.valid() && req.allocations[op.alloc.value()].deferredFree();
      if (!op.deferred && pos + 1 < n && trace.events[pos + 1].action == Action::kFreeCompleted) op.end_event++;
      pos = op.end_event;
      program.ops.push_back(op);
      if (op.alloc.valid()) free_op[op.alloc.value()] = op_index;
      continue;
    }
    if (!isLead(e.action) && e.action != Action::kAlloc && e.action != Action::kOom) {
      ++pos;  // markers
      continue;
    }
    std::size_t k = pos;
    std::size_t last_release = n;
    bool grows_after_release = false;
    while (k < n && isLead(trace.events[k].action)) {
      const Action a = trace.events[k].action;
      if (a == Action::kSegmentFree || a == Action::kSegmentUnmap) {
        last_release = k;
        grows_after_release = false;
      }
      if ((a == Action::kSegmentAlloc || a == Action::kSegmentMap) && last_release != n) grows_after_release = true;
      ++k;
    }
    const bool malloc_follows =
        k < n && (trace.events[k].action == Action::kAlloc || trace.events[k].action == Action::kOom);
    if (!malloc_follows || (last_release != n && !grows_after_release)) {
      const std::size_t end = malloc_follows ? last_release + 1 : k;
      program.ops.push_back(
          makeOp(OpKind::kEmptyCache, static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(end)));
      note_completions(pos, end, op_index);
      pos = end;
      if (!malloc_follows) continue;
    }
    const traces::TraceEvent& t = trace.events[k];
    Op op = makeOp(OpKind::kMalloc, static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(k + 1));
    op.alloc = req.event_allocation[k];
    op.size = t.size;
    op.stream_entry = internStream(program, snapshot.stream(t));
    op.recorded_oom = t.action == Action::kOom;
    note_completions(pos, k, static_cast<std::uint32_t>(program.ops.size()));
    program.ops.push_back(op);
    pos = k + 1;
  }
}

}  // namespace reservoir::replay
