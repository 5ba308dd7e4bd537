#include "reservoir/replay/whatif.h"

#include <fmt/format.h>

#include <algorithm>

#include "reservoir/traces/request_stream.h"
#include "whatif_device.h"

namespace reservoir::replay {

using traces::Action;

namespace {

constexpr sim::StreamId kOtherStream = ~sim::StreamId{0} - 1;

// Compares the modelled run with the recording, addresses apart (baseline only).
class DriftSink final : public sim::EventSink {
 public:
  explicit DriftSink(const traces::DeviceTrace& trace) : trace_(trace) {}
  void onEvent(const sim::SimEvent& e) override {
    while (pos_ < trace_.events.size() && !isState(trace_.events[pos_].action)) ++pos_;
    if (changed_) return;
    if (pos_ >= trace_.events.size()) {
      changed_ = pos_;
      return;
    }
    const auto& r = trace_.events[pos_];
    if (r.action != e.action || r.size != e.size || r.stream != e.stream) {
      changed_ = pos_;
      return;
    }
    if (e.action != Action::kOom && r.addr != e.addr) ++drift_;
    ++pos_;
  }
  [[nodiscard]] std::optional<std::size_t> changed() const { return changed_; }
  [[nodiscard]] std::size_t drift() const { return drift_; }

 private:
  static bool isState(Action a) { return a != Action::kSnapshot && a != Action::kUserDefined && a != Action::kUnknown; }
  const traces::DeviceTrace& trace_;
  std::size_t pos_ = 0;
  std::optional<std::size_t> changed_;
  std::size_t drift_ = 0;
};

struct Item {
  std::uint32_t op;  // applied before this op
  Gap gap;
  int order;         // within a phase: releases, cleanups, resets, probes and demands
  const ResolvedEdit* edit;
};

int kindOrder(Edit::Kind k) {
  switch (k) {
    case Edit::Kind::kRelease: return 0;
    case Edit::Kind::kCleanup: return 1;
    case Edit::Kind::kResetPeaks: return 2;
    case Edit::Kind::kProbe: return 3;
    case Edit::Kind::kDemand: return 4;
  }
  return 5;
}

class Runner {
 public:
  Runner(const PreparedTrace& p, const std::vector<ResolvedEdit>& edits, const RunSettings& s)
      : p_(p),
        s_(s),
        device_(p, s.address_model, s.usable),
        drift_(p.snapshot->devices[p.device_index]),
        model_(s.config, &device_, s.compare_with_recording ? &drift_ : nullptr),
        handles_(p.program.ops.empty() ? 0 : maxAlloc(p) + 1),
        released_(handles_.size(), false) {
    if (s.fraction < 1.0) model_.setMemoryFraction(s.fraction);
    for (const auto& pool : p.program.private_pools) model_.createPool(pool);
    for (const auto& e : edits)
      for (const Gap& g : e.gaps)
        items_.push_back(Item{p.program.at_boundary.at(g.boundary), g, kindOrder(e.edit.kind), &e});
    std::stable_sort(items_.begin(), items_.end(), [](const Item& a, const Item& b) {
      if (a.op != b.op) return a.op < b.op;
      if (a.gap.boundary != b.gap.boundary) return a.gap.boundary < b.gap.boundary;
      if (a.gap.phase != b.gap.phase) return a.gap.phase < b.gap.phase;
      return a.order < b.order;
    });
  }

  RunResult run();
  [[nodiscard]] PeakAnalysis analyze() const;

 private:
  static std::size_t maxAlloc(const PreparedTrace& p) {
    std::size_t m = 0;
    for (const Op& op : p.program.ops)
      if (op.alloc.valid()) m = std::max<std::size_t>(m, op.alloc.value());
    for (AllocationId id : p.program.seed_allocations)
      if (id.valid()) m = std::max<std::size_t>(m, id.value());
    return m;
  }
  [[nodiscard]] StackId stackOf(std::size_t alloc_id) const {
    return alloc_id < p_.requests.allocations.size() ? p_.requests.allocations[alloc_id].stack : StackId(0);
  }
  void seed();
  void applyItem(const Item& item);
  void runOp(std::uint32_t j);
  void track(std::uint32_t j);
  [[nodiscard]] std::int64_t reserved() const { return model_.stats().reserved_bytes[sim::kAggregate].current; }
  [[nodiscard]] std::int64_t allocated() const { return model_.stats().allocated_bytes[sim::kAggregate].current; }

  const PreparedTrace& p_;
  const RunSettings& s_;
  detail::WhatIfDevice device_;
  DriftSink drift_;
  sim::CachingAllocator model_;
  std::vector<sim::BlockHandle> handles_;
  std::vector<bool> released_;
  std::vector<Item> items_;
  RunResult r_;
  std::int64_t window_peak_reserved_ = -1, window_peak_allocated_ = -1;
};

void Runner::seed() {
  if (p_.program.seed.empty()) return;
  auto handles = model_.seed(p_.program.seed);
  if (!handles) {
    r_.invariant_failure = "seed: " + handles.message();
    return;
  }
  for (std::size_t i = 0; i < handles->size() && i < p_.program.seed_allocations.size(); ++i) {
    const AllocationId id = p_.program.seed_allocations[i];
    if (id.valid() && model_.isAllocated((*handles)[i])) handles_[id.value()] = (*handles)[i];
  }
}

void Runner::applyItem(const Item& item) {
  const Edit& e = item.edit->edit;
  switch (e.kind) {
    case Edit::Kind::kCleanup:
      model_.emptyCache();
      ++r_.empty_cache_calls;
      break;
    case Edit::Kind::kRelease: {
      StackMatcher matcher(*p_.snapshot, *e.selector);
      for (std::size_t id = 0; id < handles_.size(); ++id) {
        if (!handles_[id].valid() || released_[id]) continue;
        if (!matcher.matches(stackOf(id))) continue;
        model_.free(handles_[id]);
        handles_[id] = {};
        released_[id] = true;
      }
      break;
    }
    case Edit::Kind::kResetPeaks:
      model_.resetPeakStats();
      window_peak_reserved_ = reserved();
      window_peak_allocated_ = allocated();
      break;
    case Edit::Kind::kProbe:
      r_.probes.push_back(Probe{e.text, reserved(), allocated(), model_.stats().active_bytes[sim::kAggregate].current,
                                item.gap.boundary});
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
      if (op.pool) model_.beginAllocateToPool(sim::PoolRouting{*op.pool, std::nullopt});
      const std::uint64_t tag = op.alloc.valid() ? op.alloc.value() + 1u : 0u;
      const auto res = model_.malloc(op.size, op.stream, tag);
      if (op.pool) {
        model_.endAllocateToPool(*op.pool);
        model_.releasePool(*op.pool);
      }
      if (!res.ok()) {
        if (!r_.oom) r_.oom = OomInfo{j, op.first_event, op.size, op.stream, op.stack, 0};
        ++r_.oom->count;
      } else if (op.alloc.valid()) {
        handles_[op.alloc.value()] = res.block;
      }
      break;
    }
    case OpKind::kFree: {
      if (!op.alloc.valid() || released_[op.alloc.value()] || !handles_[op.alloc.value()].valid()) break;
      const sim::BlockHandle h = handles_[op.alloc.value()];
      if (op.deferred) model_.recordStream(h, kOtherStream);
      model_.free(h);
      handles_[op.alloc.value()] = {};
      break;
    }
    case OpKind::kEmptyCache:
      model_.emptyCache();
      ++r_.empty_cache_calls;
      break;
  }
}

void Runner::track(std::uint32_t j) {
  const auto& trace = p_.snapshot->devices[p_.device_index];
  const Op& op = p_.program.ops[j];
  auto at = [&](std::int64_t v) {
    const std::uint32_t ev = op.end_event > 0 ? op.end_event - 1 : 0;
    PeakInfo pi{v, j, ev, ev < trace.events.size() ? trace.events[ev].time_us : 0, op.stack};
    return pi;
  };
  if (reserved() > r_.peak_reserved.bytes || r_.peak_reserved.op == kNoOp) r_.peak_reserved = at(reserved());
  if (allocated() > r_.peak_allocated.bytes || r_.peak_allocated.op == kNoOp) r_.peak_allocated = at(allocated());
  if (s_.keep_timeline) {
    const auto& st = model_.stats();
    r_.timeline.push_back(TimelinePoint{reserved(), allocated(), st.active_bytes[sim::kAggregate].current,
                                        st.requested_bytes[sim::kAggregate].current});
  }
}

RunResult Runner::run() {
  seed();
  const auto n = static_cast<std::uint32_t>(p_.program.ops.size());
  std::size_t next_item = 0;
  const std::uint32_t stop = s_.stop_after_op.value_or(n - (n ? 1 : 0));
  for (std::uint32_t j = 0; j <= n; ++j) {
    while (next_item < items_.size() && items_[next_item].op == j) applyItem(items_[next_item++]);
    if (j == n) break;
    runOp(j);
    track(j);
    if (s_.stop_after_op && j >= stop) break;
  }
  r_.final_reserved = reserved();
  r_.final_allocated = allocated();
  r_.segments_allocated = static_cast<std::size_t>(model_.stats().num_device_alloc);
  r_.invariant_failure = model_.invariantFailure();
  if (s_.compare_with_recording) {
    r_.address_drift = drift_.drift();
    r_.decision_change = drift_.changed();
  }
  return r_;
}

PeakAnalysis Runner::analyze() const {
  PeakAnalysis a;
  a.reserved = reserved();
  a.allocated = allocated();
  a.cached = a.reserved - a.allocated;
  const auto& cfg = model_.config();
  for (const sim::SegmentView& seg : model_.segments()) {
    sim::ByteCount free_bytes = 0, releasable = 0;
    bool any_live = false;
    for (const auto& b : seg.blocks) {
      if (b.state != traces::BlockState::kInactive) {
        any_live = true;
        continue;
      }
      free_bytes += b.size;
      if (seg.is_expandable) {
        // whole pages inside the free block
        const sim::ByteCount page = seg.is_large ? cfg.large_segment_size : sim::kSmallBuffer;
        const sim::ByteCount first = (b.address - seg.address + page - 1) / page;
        const sim::ByteCount last = (b.address + b.size - seg.address) / page;
        if (last > first) releasable += (last - first) * page;
      }
    }
    if (!seg.is_expandable && !any_live) releasable = seg.total_size;
    a.releasable += static_cast<std::int64_t>(releasable);
    const sim::ByteCount pinned = free_bytes - std::min(free_bytes, releasable);
    if (pinned == 0) continue;
    PinnedSegment ps{seg.address, seg.total_size, pinned, {}};
    for (const auto& b : seg.blocks)
      if (b.state != traces::BlockState::kInactive && b.tag > 0) ps.live_blocks.emplace_back(b.size, stackOf(b.tag - 1));
    a.pinned.push_back(std::move(ps));
  }
  std::sort(a.pinned.begin(), a.pinned.end(), [](const PinnedSegment& x, const PinnedSegment& y) {
    return x.free_bytes > y.free_bytes;
  });
  return a;
}

}  // namespace

RunResult replayProgram(const PreparedTrace& prepared, const std::vector<ResolvedEdit>& edits, const RunSettings& settings) {
  Runner runner(prepared, edits, settings);
  RunResult result = runner.run();
  if (settings.analyze_peak && result.peak_reserved.op != kNoOp) {
    RunSettings at = settings;
    at.stop_after_op = result.peak_reserved.op;
    at.analyze_peak = false;
    at.keep_timeline = false;
    at.compare_with_recording = false;
    Runner again(prepared, edits, at);
    again.run();
    result.at_peak = again.analyze();
  }
  return result;
}

}  // namespace reservoir::replay
