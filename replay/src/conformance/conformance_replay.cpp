// The conformance driver: turns the recorded events back into the requests that made them
// (malloc, free with or without record_stream, empty_cache) and replays them through the
// model, the recording acting as oracle and yardstick.
#include "reservoir/replay/conformance.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "conformance/checkpoint_restore.h"
#include "conformance/released_pools.h"
#include "conformance/final_state_checks.h"
#include "util/model_malloc.h"
#include "conformance/missing_fraction.h"
#include "conformance/peak_resets.h"
#include "conformance/recorded_oracle.h"
#include "reservoir/traces/recorded_reserved.h"

namespace reservoir::replay {

using traces::Action;
using traces::Allocation;
using traces::TraceEvent;

namespace {

// A stream no recording uses: stands for "some other stream" in record_stream uses.
constexpr sim::StreamId kOtherStream = ~sim::StreamId{0} - 1;

bool isGroupLead(Action a) {
  return a == Action::kFreeCompleted || a == Action::kSegmentFree || a == Action::kSegmentUnmap ||
         a == Action::kSegmentAlloc || a == Action::kSegmentMap;
}

// Allocations the recording routed to a private pool (MemPool / graph): the final segments of
// a non-default pool, from the event that created them on, and those given back before the
// snapshot (conformance/released_pools.h).
using PrivateRange = detail::PoolRange;

// The seeded state of a ring-buffer trace, with the blocks whose exact size the recording
// does not give (allocated before the window, freed inside it) marked for refinement.
struct StartLayout {
  std::vector<sim::SeedSegment> segments;
  std::vector<AllocationId> ids;  // per seeded block, in order
  struct Unknown {
    std::size_t segment, block;
    sim::ByteCount min_size, max_slack;
  };
  std::vector<Unknown> unknown;
};

StartLayout initialLayout(const traces::WindowStart& start, const sim::AllocatorConfig& cfg) {
  StartLayout out;
  for (const traces::StartSegment& s : start.segments) {
    sim::SeedSegment seg{s.addr, s.size, s.stream, !s.is_large, {}, s.pool, s.is_expandable, s.mapped};
    for (std::size_t i = 0; i < s.blocks.size(); ++i) {
      const traces::StartBlock& b = s.blocks[i];
      sim::ByteCount size = b.size_known ? b.size : cfg.roundSize(b.requested);
      if (!b.size_known && s.is_large && !cfg.expandable_segments) {
        // An unsplit block keeps slack up to 1 MiB (more when oversize): start from the gap to
        // the next occupied block or the segment's end when it is that small; the replay
        // refines the rest against the recording.
        const sim::ByteCount max_slack = size >= cfg.max_split_size ? cfg.max_non_split_rounding_size : sim::kSmallSize;
        out.unknown.push_back(StartLayout::Unknown{out.segments.size(), seg.blocks.size(), size, max_slack});
        const sim::Addr limit = i + 1 < s.blocks.size() ? s.blocks[i + 1].addr : s.addr + s.size;
        const sim::ByteCount gap = limit > b.addr + size ? limit - (b.addr + size) : 0;
        if (gap > 0 && gap <= max_slack) size += gap;
      }
      seg.blocks.push_back(
          sim::SeedBlock{b.addr, size, b.requested, b.pending, b.allocation.valid() ? b.allocation.value() + 1u : 0u});
      out.ids.push_back(b.allocation);
    }
    out.segments.push_back(std::move(seg));
  }
  return out;
}

// The unknown-size block that ends exactly at `addr`, or that `addr` lies just after (within
// the free gap up to the next occupied block).
StartLayout::Unknown* blockBefore(StartLayout& layout, sim::Addr addr, bool exact_end) {
  for (auto& u : layout.unknown) {
    auto& seg = layout.segments[u.segment];
    auto& b = seg.blocks[u.block];
    if (addr <= b.addr || addr > seg.addr + seg.size) continue;
    const sim::Addr next = u.block + 1 < seg.blocks.size() ? seg.blocks[u.block + 1].addr : seg.addr + seg.size;
    if (addr > next || (exact_end && b.addr + b.size != addr)) continue;
    return &u;
  }
  return nullptr;
}

bool resize(StartLayout& layout, StartLayout::Unknown& u, sim::ByteCount wanted) {
  auto& b = layout.segments[u.segment].blocks[u.block];
  if (wanted < u.min_size || wanted > u.min_size + u.max_slack || wanted == b.size) return false;
  b.size = wanted;
  return true;
}

sim::Addr nextStart(const StartLayout& layout, const StartLayout::Unknown& u) {
  const auto& seg = layout.segments[u.segment];
  return u.block + 1 < seg.blocks.size() ? seg.blocks[u.block + 1].addr : seg.addr + seg.size;
}

// After a divergence at an allocation of `rounded` bytes. Block starts at the window's start are
// known; only the ends of blocks allocated before it (unsplit slack) are not. Either the free
// region the model chose was smaller in the recording (the block before it kept more slack),
// or the recording's region starts where the block before it really ends.
bool refineLayout(StartLayout& layout, const traces::TraceEvent& expected, const sim::SimEvent& simulated,
                  sim::ByteCount rounded) {
  using traces::Action;
  if (simulated.action == Action::kAlloc && simulated.addr != expected.addr &&
      (expected.action == Action::kAlloc || expected.action == Action::kSegmentAlloc)) {
    if (auto* u = blockBefore(layout, simulated.addr, true)) {
      const auto& b = layout.segments[u->segment].blocks[u->block];
      const sim::Addr next = nextStart(layout, *u);
      // Just enough slack that the region no longer fits the request.
      const sim::ByteCount wanted = next - rounded + sim::kMinBlockSize - b.addr;
      if (resize(layout, *u, wanted)) return true;
    }
  }
  if (expected.action == Action::kAlloc) {
    if (auto* u = blockBefore(layout, expected.addr, false)) {
      const auto& b = layout.segments[u->segment].blocks[u->block];
      if (resize(layout, *u, expected.addr - b.addr)) return true;
    }
  }
  return false;
}

class Driver {
 public:
  Driver(const traces::Snapshot& snap, std::size_t device_index, const traces::RequestStream& requests,
         const sim::AllocatorConfig& config, const ConformanceOptions& options, ConformanceReport& report)
      : snap_(snap), trace_(snap.devices[device_index]), req_(requests), options_(options), report_(report),
        oracle_(snap, trace_.events, report.total_memory), model_(config, &oracle_, &oracle_),
        handles_(requests.allocations.size()), restore_stacks_(detail::checkpointRestoreStacks(snap)),
        free_op_(requests.allocations.size(), kNoOp) {
    if (options.expensive_checks) model_.setCheckLevel(sim::CheckLevel::kExpensive);
    if (report.fraction < 1.0) model_.setMemoryFraction(report.fraction);
  }

  Status seed(const StartLayout& layout);
  void collectPrivatePools(const traces::WindowStart& start, std::span<const detail::PoolSeed> seeds);
  void estimateCapacity(const traces::WindowStart& start);
  void run();
  void finish();
  [[nodiscard]] bool diverged() const { return oracle_.failed; }
  [[nodiscard]] std::optional<sim::SimEvent> lastSimulated() const { return oracle_.last_failed_event; }

 private:
  void step();
  void doFree(std::size_t i);
  void doGroup();
  void doMalloc(std::size_t k, std::size_t first);
  bool emptyCacheFirst(const TraceEvent& t);
  std::optional<traces::PoolId> routeOf(const TraceEvent& t, std::size_t k) const;
  void recordDivergence(const std::string& reason);
  void noteTimeline(std::size_t from, std::size_t to);

  const traces::Snapshot& snap_;
  const traces::DeviceTrace& trace_;
  const traces::RequestStream& req_;
  const ConformanceOptions& options_;
  ConformanceReport& report_;
  detail::RecordedOracle oracle_;
  sim::CachingAllocator model_;
  std::vector<sim::BlockHandle> handles_;  // by AllocationId
  std::vector<PrivateRange> private_ranges_;
  std::vector<bool> restore_stacks_;  // by StackId: allocations of a checkpoint restore
  [[nodiscard]] bool restoresCheckpoint(const TraceEvent& t) const {
    return t.action == Action::kAlloc && t.stack.valid() && t.stack.value() < restore_stacks_.size() &&
           restore_stacks_[t.stack.value()];
  }
  // A failed request (oom) has no address: it goes to the pool its call stack allocated in,
  // when every successful allocation from that stack went to the same pool.
  std::map<StackId, std::optional<traces::PoolId>> pool_of_stack_;
  void collectOomRoutes();
  void collectReleasedRanges(const traces::WindowStart& start, std::span<const detail::PoolSeed> seeds);
  [[nodiscard]] sim::Addr reservationEnd(const traces::SegmentInfo& seg) const;
  [[nodiscard]] std::vector<std::size_t> creationEvents(const std::vector<const traces::SegmentInfo*>& segs) const;
  std::optional<traces::PoolId> releaseFreedPools(std::size_t first, std::size_t end);
  std::optional<traces::PoolId> ownPoolRelease(std::size_t first, std::size_t end) const;
  [[nodiscard]] bool defaultPoolsHoldAFreeSegment() const;
  std::optional<traces::PoolId> segmentPool(std::size_t j) const;
  std::set<traces::PoolId> released_pools_;  // pools made freeable (releasePool) so far
  [[nodiscard]] std::optional<traces::PoolId> addressRoute(const TraceEvent& t, std::size_t k) const;
  std::optional<sim::ByteCount> capacity_;
  // The request being replayed, described only when a divergence needs it.
  enum class Request : std::uint8_t { kNone, kFree, kMalloc, kEmptyCacheAlone, kEmptyCacheFirst };
  Request current_request_ = Request::kNone;
  std::size_t current_event_ = 0;
  [[nodiscard]] std::string describeRequest() const;
  StackId current_stack_;
  // Program recording (options.program): the ops replayed so far.
  std::vector<std::uint32_t> free_op_;  // by AllocationId: the op that freed it
  std::size_t step_start_ = 0;
  void pushOp(Op op, std::size_t first, std::size_t end);
  [[nodiscard]] std::size_t opCountHint() const;

 public:
  void finishProgram(const traces::WindowStart& start);
};

Status Driver::seed(const StartLayout& layout) {
  if (layout.segments.empty()) return {};
  auto handles = model_.seed(layout.segments);
  if (!handles) return handles.status();
  if (options_.program) {
    options_.program->seed = layout.segments;
    options_.program->seed_allocations = layout.ids;
  }
  for (std::size_t i = 0; i < layout.ids.size(); ++i)
    if (layout.ids[i].valid()) handles_[layout.ids[i].value()] = (*handles)[i];
  report_.notes.push_back(fmt::format(
      "the trace starts mid-run (ring buffer): {} segments rebuilt at its first event from the final segments",
      layout.segments.size()));
  return {};
}

void Driver::collectPrivatePools(const traces::WindowStart& start, std::span<const detail::PoolSeed> seeds) {
  std::map<traces::PoolId, bool> seen;
  // A private pool's expandable reservation at the window's start is the pool's for the whole
  // window: allocations anywhere in it go to the pool, also in ranges unmapped by the end.
  for (const traces::StartSegment& s : start.segments)
    if (s.is_expandable && !s.pool.isDefault())
      private_ranges_.push_back(PrivateRange{s.addr, s.addr + s.size, 0, s.pool});
  // Pools named by the entries' pool_id, including those whose segments were all freed
  // before the snapshot (the final segments do not show them).
  bool recorded_pools = false;
  for (const TraceEvent& e : trace_.events) {
    const traces::EventExtra& x = snap_.extra(e);
    recorded_pools = recorded_pools || x.has_pool;
    if (!x.has_pool || x.pool.isDefault() || seen.count(x.pool)) continue;
    model_.createPool(x.pool);
    if (options_.program) options_.program->private_pools.push_back(x.pool);
    seen[x.pool] = false;
  }
  if (recorded_pools) {
    report_.notes.push_back("the trace records each entry's pool (pool_id): requests are routed by it");
    // Its segments given back before the snapshot: known from their allocations' pool ids.
    for (const PrivateRange& r : detail::namedPoolRanges(snap_, trace_, start)) private_ranges_.push_back(r);
  }
  // Pools that no final segment shows, inferred by an earlier run of this replay.
  for (const detail::PoolSeed& seed : seeds) {
    if (recorded_pools || seen.count(seed.pool)) continue;
    model_.createPool(seed.pool);
    if (options_.program) options_.program->private_pools.push_back(seed.pool);
    seen[seed.pool] = false;
  }
  std::vector<const traces::SegmentInfo*> finals;
  for (const traces::SegmentInfo& s : snap_.segments) {
    if (s.device != trace_.device || s.pool.isDefault()) continue;
    if (!seen.count(s.pool)) {
      model_.createPool(s.pool);
      if (options_.program) options_.program->private_pools.push_back(s.pool);
    }
    seen[s.pool] = true;
    finals.push_back(&s);
  }
  const std::vector<std::size_t> from = creationEvents(finals);
  for (std::size_t i = 0; i < finals.size(); ++i) {
    const traces::SegmentInfo& s = *finals[i];
    private_ranges_.push_back(
        PrivateRange{s.address, s.is_expandable ? reservationEnd(s) : s.address + s.total_size, from[i], s.pool});
  }
  if (!seen.empty() && !recorded_pools) {
    const std::size_t shown = static_cast<std::size_t>(std::count_if(seen.begin(), seen.end(), [](const auto& p) { return p.second; }));
    if (shown)
      report_.notes.push_back(
          fmt::format("{} private pool(s) in the final segments: allocations inside them are routed "
                      "to their pool (the trace does not record pool ids)",
                      shown));
    collectReleasedRanges(start, seeds);
    collectOomRoutes();
  }
}

// The event that created each final segment (the last segment_alloc at its address; for an
// expandable one, its first mapping inside it), or 0 (the window's start): one pass.
std::vector<std::size_t> Driver::creationEvents(const std::vector<const traces::SegmentInfo*>& segs) const {
  std::vector<std::size_t> from(segs.size(), 0);
  std::vector<bool> mapped(segs.size(), false);
  std::map<sim::Addr, std::size_t> at, expandable;
  for (std::size_t i = 0; i < segs.size(); ++i) (segs[i]->is_expandable ? expandable : at)[segs[i]->address] = i;
  for (std::size_t k = 0; k < trace_.events.size(); ++k) {
    const TraceEvent& e = trace_.events[k];
    if (e.action == Action::kSegmentAlloc) {
      if (const auto it = at.find(e.addr); it != at.end()) from[it->second] = k;
    } else if (e.action == Action::kSegmentMap) {
      auto it = expandable.upper_bound(e.addr);
      if (it == expandable.begin()) continue;
      const std::size_t i = (--it)->second;
      if (!mapped[i] && e.addr < segs[i]->address + segs[i]->total_size) {
        from[i] = k;
        mapped[i] = true;
      }
    }
  }
  return from;
}

// An expandable segment is one address reservation per pool and stream; the final snapshot shows
// only the pages mapped at the end, and pages above them that the pool mapped and unmapped again
// are in the same reservation. It reaches up to the next final segment (another reservation), at
// most as far as a reservation does (torch reserves 9/8 of the device's memory).
sim::Addr Driver::reservationEnd(const traces::SegmentInfo& seg) const {
  sim::Addr end = seg.address + model_.config().expandableReserve(report_.total_memory);
  for (const traces::SegmentInfo& o : snap_.segments)
    if (o.device == seg.device && o.address > seg.address) end = std::min(end, o.address);
  return std::max(end, seg.address + seg.total_size);
}

void Driver::collectReleasedRanges(const traces::WindowStart& start, std::span<const detail::PoolSeed> seeds) {
  std::size_t by_stream = 0, by_stack = 0, of_inferred = 0;
  std::set<traces::PoolId> inferred;
  for (const PrivateRange& r : detail::releasedPoolRanges(snap_, trace_, start, seeds)) {
    private_ranges_.push_back(r);
    if (r.pool.inferred()) {
      ++of_inferred;
      inferred.insert(r.pool);
    } else {
      (r.by_stream ? by_stream : by_stack) += 1;
    }
  }
  if (of_inferred)
    report_.notes.push_back(fmt::format(
        "{} segment(s) given back before the snapshot belonged to {} private pool(s) that no final segment shows "
        "(a MemPool or CUDA graph dropped with all it held): the recording made {} of them for a request the "
        "default pools' cache would have served, the others' allocations or stream name the same pool",
        of_inferred, inferred.size(), seeds.size()));
  if (by_stream + by_stack)
    report_.notes.push_back(fmt::format(
        "{} segment(s) released before the snapshot routed to a private pool: {} by their stream (whose known "
        "segments are all that pool's, their allocations having no frames), {} by their allocations' call stacks "
        "(which allocated only in that pool)",
        by_stream + by_stack, by_stream, by_stack));
}

void Driver::collectOomRoutes() {
  // Stacks seen on both a pool's allocations and the default pool's are ambiguous (nullopt
  // with a conflict mark); an oom from one of them stays in the default pool.
  std::map<StackId, bool> conflict;
  for (std::size_t k = 0; k < trace_.events.size(); ++k) {
    const TraceEvent& e = trace_.events[k];
    if (e.action != Action::kAlloc || !e.stack.valid() || snap_.stack(e.stack).empty()) continue;
    const auto route = addressRoute(e, k);
    auto [it, inserted] = pool_of_stack_.try_emplace(e.stack, route);
    if (!inserted && it->second != route) conflict[e.stack] = true;
  }
  for (const auto& [stack, bad] : conflict)
    if (bad) pool_of_stack_[stack] = std::nullopt;
  std::size_t routed = 0;
  for (const TraceEvent& e : trace_.events)
    if (e.action == Action::kOom && e.stack.valid()) {
      const auto it = pool_of_stack_.find(e.stack);
      routed += it != pool_of_stack_.end() && it->second;
    }
  if (routed)
    report_.notes.push_back(
        fmt::format("{} oom event(s) routed to a private pool: their call stack allocated only in that pool", routed));
}

void Driver::estimateCapacity(const traces::WindowStart& start) {
  // Usable capacity, from each oom: cudaMemGetInfo's free bytes plus what the cache held.
  capacity_ = traces::walkRecordedReserved(trace_, static_cast<std::int64_t>(start.reservedBytes())).capacity_from_ooms;
  if (capacity_)
    report_.notes.push_back(
        fmt::format("usable capacity {} bytes, from the recorded oom events (device_free + "
                    "reserved): used to tell a failed cudaMalloc from an empty_cache",
                    *capacity_));
}

// The ops the program will hold, nearly always exactly: each starts at an alloc, a free request,
// an oom or an inferred empty_cache (a segment released). At 20 M events the ops are about a GB:
// one reservation instead of growth by doubling (the old and the new list both in memory at
// each step). A hint only: the list still grows past it if it must.
std::size_t Driver::opCountHint() const {
  std::size_t n = 0;
  for (const auto& e : trace_.events)
    switch (e.action) {
      case Action::kAlloc:
      case Action::kFreeRequested:
      case Action::kOom:
      case Action::kSegmentFree:
      case Action::kSegmentUnmap: ++n; break;
      default: break;
    }
  return n;
}

void Driver::run() {
  const std::size_t n = trace_.events.size();
  if (options_.keep_timeline) report_.timeline.reserve(n);  // one allocation, no doubling copies
  if (options_.program) options_.program->ops.reserve(opCountHint());
  std::size_t next_progress = 0;
  std::vector<std::uint32_t> resets = options_.reset_peaks_at;
  std::sort(resets.begin(), resets.end());
  std::size_t next_reset = 0;
  while (oracle_.pos < n && !oracle_.failed) {
    const std::size_t start = oracle_.pos;
    while (next_reset < resets.size() && resets[next_reset] <= start) {
      model_.resetPeakStats();
      ++next_reset;
    }
    if (options_.reset_peaks_before_each_request) model_.resetPeakStats();
    step_start_ = start;
    step();
    if (!oracle_.failed && oracle_.pos == start) recordDivergence("the replayed request produced no event");
    if (oracle_.failed) break;
    noteTimeline(start, oracle_.pos);
    if (options_.after_request) options_.after_request(start, oracle_.pos, model_);
    if (oracle_.pos >= next_progress) {
      if (options_.progress) options_.progress(oracle_.pos, n);
      if (options_.cancel && options_.cancel->load(std::memory_order_relaxed)) {
        report_.notes.push_back(fmt::format("cancelled at event {}", oracle_.pos));
        break;
      }
      next_progress = oracle_.pos + 4096;
    }
  }
  if (oracle_.failed) recordDivergence("");
}

void Driver::noteTimeline(std::size_t from, std::size_t to) {
  if (!options_.keep_timeline) return;
  const sim::StatTotals t = model_.totals();
  const TimelinePoint p{t.reserved, t.allocated, t.active, t.requested};
  // Events of one request are emitted together; the state after the request stands for all.
  report_.timeline.resize(to, p);
  (void)from;
}

void Driver::step() {
  const TraceEvent& e = trace_.events[oracle_.pos];
  switch (e.action) {
    case Action::kFreeRequested: doFree(oracle_.pos); return;
    case Action::kAlloc:
    case Action::kOom:
    case Action::kFreeCompleted:
    case Action::kSegmentAlloc:
    case Action::kSegmentFree:
    case Action::kSegmentMap:
    case Action::kSegmentUnmap: doGroup(); return;
    default:
      ++oracle_.pos;  // markers (snapshot, user_defined) change nothing
      return;
  }
}

void Driver::doFree(std::size_t i) {
  const AllocationId id = req_.event_allocation[i];
  current_request_ = Request::kFree;
  current_event_ = i;
  current_stack_ = trace_.events[i].stack;
  if (!id.valid() || !handles_[id.value()].valid()) {
    recordDivergence("the recording frees a block the model does not hold");
    return;
  }
  const Allocation& a = req_.allocations[id.value()];
  current_stack_ = a.stack;
  const sim::BlockHandle h = handles_[id.value()];
  if (a.deferredFree()) model_.recordStream(h, kOtherStream);
  model_.free(h);
  handles_[id.value()] = {};
  Op op = makeOp(OpKind::kFree);
  op.alloc = id;
  if (options_.program) op.stream_entry = internStream(*options_.program, snap_.stream(trace_.events[i]));
  op.deferred = a.deferredFree();
  pushOp(op, i, oracle_.pos);
}

void Driver::pushOp(Op op, std::size_t first, std::size_t end) {
  if (!options_.program || oracle_.failed) return;
  Program& p = *options_.program;
  op.first_event = static_cast<std::uint32_t>(first);
  op.end_event = static_cast<std::uint32_t>(end);
  const auto index = static_cast<std::uint32_t>(p.ops.size());
  for (std::size_t i = first; i < end; ++i) {
    if (trace_.events[i].action != Action::kFreeCompleted) continue;
    const AllocationId id = req_.event_allocation[i];
    if (id.valid() && free_op_[id.value()] != kNoOp && p.ops[free_op_[id.value()]].deferred)
      p.ops[free_op_[id.value()]].link = index;  // its completion
    else if (id.valid() && free_op_[id.value()] == kNoOp && req_.allocations[id.value()].beforeWindow())
      p.seed_completes_at.emplace_back(id, index);  // a pending block of the seeded start state
  }
  if (op.kind == OpKind::kFree && op.alloc.valid()) free_op_[op.alloc.value()] = index;
  p.ops.push_back(op);
}

void Driver::finishProgram(const traces::WindowStart& start) {
  if (!options_.program) return;
  Program& p = *options_.program;
  p.device_index = report_.device_index;
  p.events = trace_.events.size();
  p.reservation_bases = oracle_.reservations;
  if (oracle_.failed) appendStructurally(snap_, trace_, req_, step_start_, p);
  (void)start;
}

void Driver::doGroup() {
  const std::size_t n = trace_.events.size();
  std::size_t k = oracle_.pos;
  while (k < n && isGroupLead(trace_.events[k].action)) ++k;
  const bool malloc_follows =
      k < n && (trace_.events[k].action == Action::kAlloc || trace_.events[k].action == Action::kOom);
  std::size_t first = oracle_.pos;
  // A MemPool's destructor empties its own pool: that pool's frees lead the group, an
  // empty_cache's of the whole cache may follow.
  if (const auto pool = ownPoolRelease(first, k)) {
    current_request_ = Request::kEmptyCacheAlone;
    current_stack_ = StackId(0);
    released_pools_.insert(*pool);
    detail::modelEmptyCache(model_, pool, true);
    if (oracle_.failed) return;
    Op op = makeOp(OpKind::kEmptyCache);
    if (options_.program) op.link = internRoute(*options_.program, OpRoute{pool, std::nullopt, true});
    pushOp(op, first, oracle_.pos);
    first = oracle_.pos;
    if (first == k && !malloc_follows) return;  // the group was the pool's alone
  }
  bool releases = false;
  for (std::size_t j = first; j < k; ++j)
    releases = releases || trace_.events[j].action == Action::kSegmentFree ||
               trace_.events[j].action == Action::kSegmentUnmap;
  if (first == k && malloc_follows) return doMalloc(k, first);
  Op empty = makeOp(OpKind::kEmptyCache);
  const auto released = releaseFreedPools(first, k);
  if (options_.program && released)
    empty.link = internRoute(*options_.program, OpRoute{released, std::nullopt, false});
  if (!malloc_follows) {
    current_request_ = Request::kEmptyCacheAlone;
    current_stack_ = StackId(0);
    detail::modelEmptyCache(model_, released, false);
    ++report_.empty_cache_calls;
    pushOp(empty, first, oracle_.pos);
    return;
  }
  if (releases) {
    model_.processEvents();  // the completions the recording shows first
    if (emptyCacheFirst(trace_.events[k])) {
      current_request_ = Request::kEmptyCacheFirst;
      detail::modelEmptyCache(model_, released, false);
      ++report_.empty_cache_calls;
      if (oracle_.failed) return;
      pushOp(empty, first, oracle_.pos);
      doMalloc(k, oracle_.pos);
      return;
    }
  }
  if (released) model_.releasePool(*released);  // freed by the malloc's own release-and-retry
  doMalloc(k, first);
}

// The private pool whose segments the group [first, end) gives back first, when other segments
// follow them: a MemPool's own empty_cache (its destructor: releasePool, then emptyCache of that
// pool), once per pool.
std::optional<traces::PoolId> Driver::ownPoolRelease(std::size_t first, std::size_t end) const {
  std::optional<traces::PoolId> pool;
  std::size_t j = first;
  for (; j < end; ++j) {
    const auto p = segmentPool(j);
    if (!p || (pool && *p != *pool)) break;
    pool = p;
  }
  if (!pool || released_pools_.count(*pool) || j == first) return std::nullopt;
  // The whole group is the pool's: its own empty_cache where an empty_cache of the whole cache
  // would also have given back the default pools' free segments.
  if (j >= end) return defaultPoolsHoldAFreeSegment() ? pool : std::nullopt;
  const Action a = trace_.events[j].action;
  return a == Action::kSegmentFree || a == Action::kSegmentUnmap ? pool : std::nullopt;
}

bool Driver::defaultPoolsHoldAFreeSegment() const {
  for (const sim::SegmentView& s : model_.segments())
    if (s.pool.isDefault() && !s.is_expandable && s.allocated_size == 0) return true;
  return false;
}

// The private pool of what event `j` gives back (a range of private_ranges_): the segment a
// segment_free frees, or the reservation whose pages a segment_unmap unmaps.
std::optional<traces::PoolId> Driver::segmentPool(std::size_t j) const {
  const TraceEvent& e = trace_.events[j];
  const bool unmap = e.action == Action::kSegmentUnmap;
  if (!unmap && e.action != Action::kSegmentFree) return std::nullopt;
  for (const PrivateRange& r : private_ranges_) {
    const bool at = unmap ? e.addr >= r.begin && e.addr < r.end : e.addr == r.begin;
    if (at && j >= r.from_event && j <= r.to_event) return r.pool;
  }
  return std::nullopt;
}

// An empty_cache frees a private pool's segments only once the pool is freeable (its CUDA graphs
// or MemPool dropped: releasePool, which the trace does not record). The first segment of a
// private pool that a group of segment frees gives back says that it was: the pool is released
// then, once (the caller makes it freeable on the model, before the group's empty_cache).
std::optional<traces::PoolId> Driver::releaseFreedPools(std::size_t first, std::size_t end) {
  for (std::size_t j = first; j < end; ++j) {
    const auto pool = segmentPool(j);
    if (pool && released_pools_.insert(*pool).second) return pool;
  }
  return std::nullopt;
}

bool Driver::emptyCacheFirst(const TraceEvent& t) {
  if (model_.wouldReuseCachedBlock(t.size, snap_.stream(t))) return true;  // the malloc needed no release
  if (model_.wouldCollectGarbage()) return false;                   // garbage collection releases first
  if (t.action == Action::kOom) return false;
  const auto& cfg = model_.config();
  const sim::ByteCount alloc_size = cfg.allocationSize(cfg.roundSize(t.size));
  const auto allowed = model_.allowedMemoryMaximum();
  if (allowed && model_.totalAllocatedMemory() + alloc_size > *allowed) return false;      // the fraction refuses it
  if (capacity_ && model_.totalAllocatedMemory() + alloc_size > *capacity_) return false;  // the driver refuses it
  return true;
}

std::optional<traces::PoolId> Driver::addressRoute(const TraceEvent& t, std::size_t k) const {
  for (const PrivateRange& r : private_ranges_)
    if (t.addr >= r.begin && t.addr < r.end && k >= r.from_event && k < r.to_event) return r.pool;
  return std::nullopt;
}

std::optional<traces::PoolId> Driver::routeOf(const TraceEvent& t, std::size_t k) const {
  if (t.action != Action::kAlloc && t.action != Action::kOom) return std::nullopt;
  // Newer torch records the pool on every entry: no guessing.
  if (const traces::EventExtra& x = snap_.extra(t); x.has_pool)
    return x.pool.isDefault() ? std::nullopt : std::optional<traces::PoolId>(x.pool);
  if (t.action == Action::kAlloc) return addressRoute(t, k);
  if (t.action == Action::kOom && t.stack.valid()) {
    const auto it = pool_of_stack_.find(t.stack);
    if (it != pool_of_stack_.end()) return it->second;
  }
  return std::nullopt;
}

void Driver::doMalloc(std::size_t k, std::size_t first) {
  const TraceEvent& t = trace_.events[k];
  const AllocationId id = req_.event_allocation[k];
  current_request_ = Request::kMalloc;
  current_event_ = k;
  current_stack_ = t.stack;
  const auto route = routeOf(t, k);
  const std::uint64_t tag = id.valid() ? id.value() + 1u : 0u;
  // A checkpoint restore takes the block at the checkpoint's address (the recorded one).
  const bool restore = restoresCheckpoint(t);
  const auto r = detail::modelMalloc(model_, t.size, snap_.stream(t), tag, route,
                                     restore ? std::optional<sim::Addr>(t.addr) : std::nullopt);
  if (id.valid() && r.ok()) handles_[id.value()] = r.block;
  Op op = makeOp(OpKind::kMalloc);
  op.alloc = id;
  op.size = t.size;
  op.recorded_oom = t.action == Action::kOom;
  if (options_.program) {
    op.stream_entry = internStream(*options_.program, snap_.stream(t));
    op.link = internRoute(*options_.program, OpRoute{route, restore ? std::optional<sim::Addr>(t.addr) : std::nullopt});
  }
  pushOp(op, first, oracle_.pos);
}

std::string Driver::describeRequest() const {
  const TraceEvent& e = trace_.events[std::min(current_event_, trace_.events.size() - 1)];
  switch (current_request_) {
    case Request::kFree: return fmt::format("free of the block at {:#x}", e.addr);
    case Request::kMalloc: return fmt::format("malloc({} bytes) on stream {}", e.size, snap_.stream(e));
    case Request::kEmptyCacheAlone: return "empty_cache (inferred: cache released outside any allocation)";
    case Request::kEmptyCacheFirst:
      return "empty_cache (inferred: releases before an allocation that did not need them)";
    case Request::kNone: break;
  }
  return "(start of the trace)";
}

void Driver::recordDivergence(const std::string& reason) {
  if (report_.first_divergence) return;
  Divergence d;
  d.event_index = oracle_.failed ? oracle_.fail_index : oracle_.pos;
  d.expected = oracle_.failed
                   ? oracle_.fail_expected
                   : (oracle_.pos < trace_.events.size() ? describeEvent(snap_, trace_.events[oracle_.pos]) : "");
  d.simulated = oracle_.failed ? oracle_.fail_simulated : "(nothing)";
  d.request = describeRequest();
  d.stack = describeStack(snap_, current_stack_);
  d.reason = reason.empty() ? "the model's event differs from the recorded one" : reason;
  if (d.event_index < trace_.events.size()) {
    const TraceEvent& e = trace_.events[d.event_index];
    std::string pool;
    for (const auto& [addr, size] : model_.freeBlocksNear(e.size, snap_.stream(e), 12))
      pool += fmt::format("{}[{:#x} +{}]", pool.empty() ? "" : " ", addr, size);
    d.pool_state = pool.empty() ? "(no free blocks on that stream in that pool)" : pool;
  }
  report_.first_divergence = std::move(d);
  oracle_.failed = true;
}

void Driver::finish() {
  report_.events_compared = oracle_.compared;
  report_.final_stats = model_.stats();
  report_.invariant_failure = model_.invariantFailure();
  if (report_.first_divergence) return;
  detail::compareLayout(snap_, trace_.device, model_.segments(), report_);
  detail::compareStats(model_.stats(), options_.env.capture.get(), report_);
}

}  // namespace

Expected<sim::AllocatorConfig> replayConfig(const traces::Snapshot& snapshot, const ReplayEnvironment& env) {
  if (env.settings) return sim::parseAllocConf(*env.settings);
  return sim::configFromRecorded(snapshot.settings);
}

std::optional<std::string> nothingToReplay(const traces::Snapshot& snapshot, std::optional<std::size_t> device,
                                           const Wording& wording) {
  auto has_history = [](const traces::DeviceTrace& d) {
    return std::any_of(d.events.begin(), d.events.end(),
                       [](const TraceEvent& e) { return e.action != Action::kSnapshot; });
  };
  if (device) {
    if (*device < snapshot.devices.size() && has_history(snapshot.devices[*device])) return std::nullopt;
  } else if (std::any_of(snapshot.devices.begin(), snapshot.devices.end(), has_history)) {
    return std::nullopt;
  }
  return fmt::format(
      "the snapshot has no allocation history (recorded without traces: _record_memory_history was off or "
      "enabled=\"state\"), so there is nothing to replay; its {} segment(s) can be inspected with {}",
      snapshot.segments.size(), wording.run(Command::kInfo));
}

std::vector<std::string> settingsNotes(const sim::AllocatorConfig& config) {
  std::vector<std::string> notes;
  for (const std::string& key : config.ignored_keys)
    notes.push_back(fmt::format(
        "the recorded settings contain '{}', a key this version of Reservoir does not know (a newer PyTorch?): "
        "replayed as if it were absent, so the result may differ from the recording",
        key));
  for (const std::string& w : config.parse_warnings) notes.push_back("allocator settings: " + w);
  if (!config.expandable_segments_reserve_by_class.empty())
    notes.push_back(
        "expandable_segments_reserve_by_class is set, but a snapshot does not record which class a stream was given: "
        "every stream is replayed as untagged");
  return notes;
}

// Replays tried with inferred pool segments at most (each adds one segment and must carry the
// replay past it; its allocations' stacks usually name the pool's other segments at once).
constexpr std::size_t kMaxPoolSeeds = 16;

Expected<ConformanceReport> runConformance(const traces::Snapshot& snapshot, std::size_t device_index,
                                           const ConformanceOptions& options) {
  if (device_index >= snapshot.devices.size())
    return Status::error(
        fmt::format("device index {} out of range (the snapshot has {})", device_index, snapshot.devices.size()));
  auto config = replayConfig(snapshot, options.env);
  if (!config) return config.status();
  ConformanceReport report;
  report.device_index = device_index;
  report.device = snapshot.devices[device_index].device;
  report.settings = config->last_settings;
  report.notes = settingsNotes(*config);
  const CaptureFacts* capture = options.env.capture.get();
  report.fraction =
      options.env.fraction.value_or(capture && capture->fraction && *capture->fraction > 0 ? *capture->fraction : 1.0);
  report.total_memory =
      options.env.total_memory.value_or(capture && capture->device_total ? *capture->device_total : kH200TotalMemory);
  report.total_memory_source = options.env.total_memory           ? "given"
                               : capture && capture->device_total ? capture->path
                                                                  : "";
  report.events_total = snapshot.devices[device_index].events.size();
  // A cancel leaves no report: a replay cut short checks nothing.
  const auto cancelled = [&] { return options.cancel && options.cancel->load(); };
  traces::RequestStream built;
  if (!options.requests)
    built = traces::buildRequestStream(snapshot.devices[device_index], snapshot.extras, options.cancel);
  const traces::RequestStream& requests = options.requests ? *options.requests : built;
  if (cancelled()) return Status::error("cancelled before the replay");
  // Actions missing by design (skip_actions), unless entries with unknown actions may be them.
  if (!requests.skipped_actions.empty() && snapshot.anomalies.count(traces::Anomaly::unknown_action) == 0) {
    std::string names;
    for (Action a : requests.skipped_actions)
      names += fmt::format("{}\"{}\"", names.empty() ? "" : ", ", traces::actionName(a));
    return Status::error(fmt::format(
        "recorded without some allocator actions (skip_actions=[{}], inferred: the trace has none of them, but "
        "the actions they pair with): the model needs every action to replay the program, so the event-by-event "
        "check, what-ifs, sweeps and gates cannot be answered from it; {} still gives its final "
        "segments and the recorded reserved peak (record without skip_actions to replay it)",
        names, wordingOr(options.env.wording).run(Command::kInfo)));
  }
  traces::WindowOptions window;
  window.expandable_reserve = config->expandableReserve(report.total_memory);
  window.large_page = config->large_segment_size;
  auto start = traces::rebuildWindowStart(snapshot, device_index, requests, window);
  if (!start) return start.status();
  if (cancelled()) return Status::error("cancelled before the replay");
  report.window_complete = start->complete;
  StartLayout layout = initialLayout(*start, *config);
  // A ring-buffer trace's unknown block sizes are fitted to the recording: replay, and at a
  // divergence at an allocation move the block boundary to where the recording put it.
  const int max_attempts = start->complete ? 1 : 256;
  // A private pool that gave back all its segments before the dump is not in the snapshot: each
  // segment the recording made for it where the model served the request from the default pools
  // is taken for a pool's (detail::inferredPoolSeed), and the replay runs again. Kept only when
  // that makes the replay exact; else the replay without them is the report.
  const auto& events = snapshot.devices[device_index].events;
  const bool pool_ids_recorded = std::any_of(events.begin(), events.end(),
                                             [&](const TraceEvent& e) { return snapshot.extra(e).has_pool; });
  std::vector<detail::PoolSeed> seeds;
  bool seeds_failed = false;
  std::size_t tried_seeds = 0, first_seed_event = 0;
  for (int attempt = 0;;) {
    ConformanceReport trial = report;
    if (options.program) *options.program = Program{};
    Driver driver(snapshot, device_index, requests, *config, options, trial);
    if (Status st = driver.seed(layout); !st.ok())
      return Status::error("cannot seed the trace's start state: " + st.message());
    driver.collectPrivatePools(*start, seeds);
    driver.estimateCapacity(*start);
    driver.run();
    if (cancelled()) return Status::error("cancelled");  // a partial replay checks nothing
    const std::optional<std::size_t> at =
        driver.diverged() && trial.first_divergence ? std::optional(trial.first_divergence->event_index) : std::nullopt;
    const bool refit = at && attempt + 1 < max_attempts && driver.lastSimulated() &&
                       refineLayout(layout, events[*at], *driver.lastSimulated(), config->roundSize(events[*at].size));
    if (refit) {
      ++attempt;
      continue;
    }
    // Each guess must carry the replay past the segment it explains, else it is not the reason.
    const bool progressed = seeds.empty() || (at && *at > seeds.back().segment_event);
    if (at && !pool_ids_recorded && !seeds_failed && progressed && driver.lastSimulated() &&
        seeds.size() < kMaxPoolSeeds) {
      if (auto seed =
              detail::inferredPoolSeed(snapshot, snapshot.devices[device_index], *at, *driver.lastSimulated(), seeds)) {
        seeds.push_back(*seed);
        continue;
      }
    }
    if (at && !seeds.empty()) {  // the inferred pools did not make it exact: replay without them
      tried_seeds = seeds.size();
      first_seed_event = seeds.front().segment_event;
      seeds.clear();
      seeds_failed = true;
      continue;
    }
    driver.finish();
    driver.finishProgram(*start);
    if (attempt > 0)
      trial.notes.push_back(
          fmt::format("{} block boundaries of the rebuilt start state were fitted to the recording", attempt));
    if (seeds_failed)
      trial.notes.push_back(fmt::format(
          "the recording made a segment at event {} for a request the model served from its cache: taking it{} for "
          "a private pool's that no final segment shows did not make the replay exact, so this is the replay "
          "without that guess",
          first_seed_event, tried_seeds > 1 ? fmt::format(" (and {} more segments)", tried_seeds - 1) : std::string()));
    report = std::move(trial);
    break;
  }
  if (options.request_stream && !options.requests) *options.request_stream = std::move(built);
  if (options.find_peak_resets && options.reset_peaks_at.empty())
    detail::findPeakReset(snapshot, device_index, options, report);
  if (options.find_missing_fraction) detail::findMissingFraction(snapshot, device_index, options, report);
  return report;
}

}  // namespace reservoir::replay
