#include "whatif/run_engine.h"

#include <algorithm>

#include "reservoir/replay/peak_explain.h"
#include "util/model_malloc.h"
#include "whatif/run_repeat.h"

namespace reservoir::replay::detail {

Runner::Runner(const PreparedTrace& p, const std::vector<ResolvedEdit>& edits, const RunSettings& s)
    : p_(p), s_(s), device_(p, s.address_model, s.usable), drift_(*p.snapshot, p.device_index),
      model_(s.config, &device_, nullptr), released_() {
  bindSlots();
  model_.rebind(&device_, wireSink());
  if (s.fraction < 1.0) model_.setMemoryFraction(s.fraction);
  for (const auto& pool : p.program.private_pools) model_.createPool(pool);
  // A point per op: one reservation, not growth by doubling (at 20 M events, hundreds of MB).
  if (s.keep_timeline) r_.timeline.reserve(p.program.ops.size() + 1);
  if (s.keep_curves)
    for (auto* c : {&r_.curves.allocated, &r_.curves.active}) c->reserve(p.program.ops.size());
  addEdits(edits);
  seed();
}

Runner::Runner(const Runner& o)
    : p_(o.p_), s_(o.s_), device_(o.device_), drift_(o.drift_), sink_(), model_(o.model_), own_slots_(o.own_slots_),
      slots_(o.slots_), op_slots_(o.op_slots_), slot_block_(o.slot_block_), slot_alloc_(o.slot_alloc_), released_(o.released_), items_(o.items_), next_item_(o.next_item_), next_op_(o.next_op_),
      reserved_sum_(o.reserved_sum_), r_(o.r_) {
  model_.rebind(&device_, wireSink());
}

Runner::~Runner() = default;

void Runner::bindSlots() {
  if (hasHandleSlots(p_.program)) {
    slots_ = &p_.program.handle_slots;
  } else {
    own_slots_ = std::make_shared<const HandleSlots>(computeHandleSlots(p_.program, p_.allocation_stacks.size()));
    slots_ = own_slots_.get();
    op_slots_ = own_slots_->op.data();
  }
}

// The slot arrays grow with the slots in use so far (a checkpoint early in the run copies few).
void Runner::holdSlot(std::uint32_t slot) {
  if (slot < slot_block_.size()) return;
  const std::size_t n = std::min<std::size_t>(slots_->count, std::max<std::size_t>(slot + 1, slot_block_.size() * 2));
  slot_block_.resize(n, sim::BlockHandle{});
  slot_alloc_.resize(n, HandleSlots::kNone);
}

sim::EventSink* Runner::wireSink() {
  sink_.drift = s_.compare_with_recording ? &drift_ : nullptr;
  sink_.record = s_.record_events;
  sink_.op = &next_op_;
  return (sink_.drift || sink_.record) ? &sink_ : nullptr;
}

void Runner::addEdits(const std::vector<ResolvedEdit>& edits) {
  OpBoundaryCursor at(p_.program);
  for (const auto& e : edits)
    for (const Gap& g : e.gaps) addItem(at.at(g.boundary), g, e);
  sortItems();
}

void Runner::addEdit(const ResolvedEdit& e, std::span<const std::uint32_t> ops) {
  for (std::size_t k = 0; k < e.gaps.size() && k < ops.size(); ++k) addItem(ops[k], e.gaps[k], e);
  sortItems();
}

void Runner::addItem(std::uint32_t op, const Gap& g, const ResolvedEdit& e) {
  if (op >= next_op_) items_.push_back(Item{op, g, kindOrder(e.edit.kind), &e});  // earlier ones: past
}

void Runner::sortItems() {
  std::stable_sort(items_.begin() + static_cast<std::ptrdiff_t>(next_item_), items_.end(),
                   [](const Item& a, const Item& b) {
                     if (a.op != b.op) return a.op < b.op;
                     if (a.gap.boundary != b.gap.boundary) return a.gap.boundary < b.gap.boundary;
                     if (a.gap.phase != b.gap.phase) return a.gap.phase < b.gap.phase;
                     return a.order < b.order;
                   });
}

void Runner::seed() {
  if (p_.program.seed.empty()) return;
  auto handles = model_.seed(p_.program.seed);
  if (!handles) {
    r_.invariant_failure = "seed: " + handles.message();
    return;
  }
  for (std::size_t i = 0; i < handles->size() && i < p_.program.seed_allocations.size(); ++i) {
    const std::uint32_t slot = slots_->seed[i];
    if (slot != HandleSlots::kNone && model_.isAllocated((*handles)[i])) {
      holdSlot(slot);
      slot_block_[slot] = (*handles)[i];
      slot_alloc_[slot] = p_.program.seed_allocations[i].value();
    }
  }
}

void Runner::applyItem(const Item& item) {
  const Edit& e = item.edit->edit;
  const bool changes_cache = e.kind == Edit::Kind::kCleanup || e.kind == Edit::Kind::kRelease;
  if (changes_cache && s_.observe_edits_only) {
    recordEditFigure(item);
    return;
  }
  applyEdit(item);
  if (changes_cache) recordEditFigure(item);
}

void Runner::recordEditFigure(const Item& item) {
  if (!s_.figures_at_edits) return;
  const Edit& e = item.edit->edit;
  r_.at_edits.push_back(EditFigure{e.kind, e.text, e.point.text, reserved(), allocated(), item.gap.boundary});
}

void Runner::applyEdit(const Item& item) {
  const Edit& e = item.edit->edit;
  switch (e.kind) {
    case Edit::Kind::kCleanup:
      model_.emptyCache();
      ++r_.empty_cache_calls;
      break;
    case Edit::Kind::kRelease: {
      StackMatcher matcher(*p_.snapshot, *e.selector);
      std::vector<std::pair<std::uint32_t, std::uint32_t>> live;  // (allocation id, slot)
      for (std::uint32_t slot = 0; slot < slot_block_.size(); ++slot)
        if (slot_block_[slot].valid() && matcher.matches(stackOf(slot_alloc_[slot])))
          live.emplace_back(slot_alloc_[slot], slot);
      std::sort(live.begin(), live.end());  // free in allocation order
      for (const auto& [id, slot] : live) {
        model_.free(slot_block_[slot]);
        slot_block_[slot] = sim::BlockHandle{};
        released_.insert(id);
      }
      break;
    }
    case Edit::Kind::kResetPeaks:
      model_.resetPeakStats();
      r_.peak_reserved = PeakInfo{};
      r_.peak_allocated = PeakInfo{};
      break;
    case Edit::Kind::kProbe:
      r_.probes.push_back(Probe{e.text, reserved(), allocated(), model_.totals().active, item.gap.boundary});
      break;
    case Edit::Kind::kDemand: {
      DemandResult d{e.text, e.bytes, device_.usable().has_value(), true, 0};
      if (device_.usable()) {
        d.free = static_cast<std::int64_t>(*device_.usable()) - static_cast<std::int64_t>(device_.used());
        d.fits = d.free >= static_cast<std::int64_t>(e.bytes);
      }
      r_.demands.push_back(d);
      break;
    }
  }
}

void Runner::runOp(std::uint32_t j) {
  const Op& op = p_.program.ops[j];
  device_.setCurrentOp(j);
  switch (op.kind) {
    case OpKind::kMalloc: {
      const std::uint64_t tag = op.alloc.valid() ? op.alloc.value() + 1u : 0u;
      const OpRoute& route = routeOf(p_.program, op);
      const auto res = detail::modelMalloc(model_, op.size, streamOf(p_.program, op), tag, route.pool, route.restore_at);
      const std::uint64_t request = mallocs_++;
      if (!res.ok()) {
        if (!r_.oom)
          r_.oom = OomInfo{j,       op.first_event, op.size,    streamOf(p_.program, op), p_.opStack(op), 0,
                           request, reserved(),     allocated()};
        ++r_.oom->count;
      } else if (const std::uint32_t slot = slotOf(j); slot != HandleSlots::kNone) {
        holdSlot(slot);
        slot_block_[slot] = res.block;
        slot_alloc_[slot] = op.alloc.value();
      }
      break;
    }
    case OpKind::kFree: {
      const std::uint32_t slot = slotOf(j);
      if (slot >= slot_block_.size()) break;  // none, or never held (its malloc failed)
      const sim::BlockHandle h = slot_block_[slot];
      if (!h.valid()) break;  // released earlier by an edit, or its malloc failed
      if (op.deferred) model_.recordStream(h, kOtherStream);
      model_.free(h);
      slot_block_[slot] = sim::BlockHandle{};
      break;
    }
    case OpKind::kEmptyCache: {
      const OpRoute& route = routeOf(p_.program, op);
      detail::modelEmptyCache(model_, route.pool, route.pool_only);
      if (!route.pool_only) ++r_.empty_cache_calls;
      break;
    }
  }
}

std::uint32_t lastEventOf(const Op& op) { return op.end_event > 0 ? op.end_event - 1 : 0; }

std::uint32_t reservedEventOf(const traces::DeviceTrace& trace, const Op& op) {
  std::uint32_t grew = lastEventOf(op);
  for (std::uint32_t e = op.first_event; e < op.end_event && e < trace.events.size(); ++e)
    if (trace.events[e].action == Action::kSegmentAlloc || trace.events[e].action == Action::kSegmentMap) grew = e;
  return grew;
}

void Runner::track(std::uint32_t j) {
  const auto& trace = p_.snapshot->devices[p_.device_index];
  const Op& op = p_.program.ops[j];
  // The peak's event (reservedEventOf): a reserved peak at the op's last segment event, others at its last event.
  // Both events are found only when a peak moves (the scan of the op's events is most of this
  // function's cost otherwise).
  auto at = [&](std::int64_t v, std::uint32_t ev) {
    PeakInfo pi{v, j, ev, trace.timeOf(ev), p_.opStack(op)};
    return pi;
  };
  const sim::StatTotals now = model_.totals();  // one call per op (it is on the replay's hot path)
  const std::int64_t res = now.reserved;
  const std::int64_t alloc = now.allocated;
  if (res > r_.peak_reserved.bytes || r_.peak_reserved.op == kNoOp) r_.peak_reserved = at(res, reservedEventOf(trace, op));
  if (alloc > r_.peak_allocated.bytes || r_.peak_allocated.op == kNoOp) r_.peak_allocated = at(alloc, lastEventOf(op));
  reserved_sum_ += static_cast<double>(res);
  if (watch_) watch_->reserved.push_back(res);
  if (!s_.peak_windows.empty() && inWindow(j)) r_.peak_in_windows = std::max(r_.peak_in_windows.value_or(0), res);
  if (s_.keep_timeline) r_.timeline.push_back(TimelinePoint{res, alloc, now.active, now.requested});
  if (s_.keep_curves) {
    r_.curves.reserved.push(j, res);
    r_.curves.allocated.push_back(alloc);
    r_.curves.active.push_back(now.active);
  }
}

bool Runner::inWindow(std::uint32_t op) const {
  const auto& w = s_.peak_windows;
  auto it = std::upper_bound(w.begin(), w.end(), op, [](std::uint32_t v, const OpWindow& x) { return v < x.begin; });
  return it != w.begin() && op < std::prev(it)->end;
}

void Runner::moveCurvesTo(OpCurves& out) {
  OpCurves& c = r_.curves;
  if (out.allocated.empty()) {
    std::swap(out, c);  // `out` takes the reservation (one entry per op) and what is in it
  } else {
    out.reserved.append(c.reserved);
    out.allocated.append(c.allocated);
    out.active.append(c.active);
  }
  c.reserved = StepSeries{};
  c.allocated.clear();  // the capacity stays for the next piece; a copy of the runner copies none of it
  c.active.clear();
}

void Runner::step() {
  const std::uint32_t j = next_op_;
  while (next_item_ < items_.size() && items_[next_item_].op == j) applyItem(items_[next_item_++]);
  runOp(j);
  track(j);
  ++next_op_;
  if (watch_ && next_op_ == watch_->next_boundary) atPeriodBoundary();
}

void Runner::finish() {
  const auto n = static_cast<std::uint32_t>(p_.program.ops.size());
  if (next_op_ >= n)
    while (next_item_ < items_.size()) applyItem(items_[next_item_++]);
  r_.final_reserved = reserved();
  r_.final_allocated = allocated();
  r_.segments_allocated = static_cast<std::size_t>(model_.stats().num_device_alloc);
  r_.driver = device_.work();
  r_.mean_reserved = next_op_ ? reserved_sum_ / static_cast<double>(next_op_) : 0.0;
  r_.invariant_failure = model_.invariantFailure();
  if (s_.compare_with_recording) {
    r_.address_drift = drift_.drift();
    r_.decision_change = drift_.changed();
  }
}

RunResult Runner::run() {
  const auto n = static_cast<std::uint32_t>(p_.program.ops.size());
  while (next_op_ < n) {
    step();
    if (s_.stop_after_op && next_op_ > *s_.stop_after_op) break;
    if (s_.cancel && (next_op_ & 4095) == 0 && s_.cancel->load(std::memory_order_relaxed)) break;
  }
  finish();
  return std::move(r_);  // the result is handed over (its timeline is not copied); the model stays
}

PeakAnalysis Runner::analyze() const {
  const auto segments = model_.segments();
  return analyzeCache(segments, model_.config(), reserved(), allocated(),
                      [this](std::uint64_t tag) { return stackOf(tag - 1); });
}

}  // namespace reservoir::replay::detail
