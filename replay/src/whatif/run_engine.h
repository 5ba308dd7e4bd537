// The replay engine behind what-if runs, the state index and the sweep: a steppable,
// copyable run of a program under edits (a copy is a checkpoint).
#pragma once

#include <array>
#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "reservoir/replay/whatif.h"
#include <memory>

#include "reservoir/replay/program.h"
#include "whatif/device_models.h"
#include "whatif/program_period.h"

namespace reservoir::replay::detail {

using traces::Action;

inline constexpr sim::StreamId kOtherStream = ~sim::StreamId{0} - 1;

// Compares the modelled run with the recording, addresses apart (baseline only).
class DriftSink final : public sim::EventSink {
 public:
  DriftSink(const traces::Snapshot& snapshot, std::size_t device) : snap_(snapshot), trace_(snapshot.devices[device]) {}
  void onEvent(const sim::SimEvent& e) override {
    while (pos_ < trace_.events.size() && !isState(trace_.events[pos_].action)) ++pos_;
    if (changed_) return;
    if (pos_ >= trace_.events.size()) {
      changed_ = pos_;
      return;
    }
    const auto& r = trace_.events[pos_];
    if (r.action != e.action || r.size != e.size || snap_.stream(r) != e.stream) {
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
  const traces::Snapshot& snap_;
  const traces::DeviceTrace& trace_;
  std::size_t pos_ = 0;
  std::optional<std::size_t> changed_;
  std::size_t drift_ = 0;
};

// Where the model's events go: the drift comparison and/or a recording for exports.
class RunnerSink final : public sim::EventSink {
 public:
  DriftSink* drift = nullptr;
  std::vector<EmittedEvent>* record = nullptr;
  const std::uint32_t* op = nullptr;
  void onEvent(const sim::SimEvent& e) override {
    if (drift) drift->onEvent(e);
    if (record) record->push_back(EmittedEvent{e, *op});
  }
};

struct Item {
  std::uint32_t op;  // applied before this op
  Gap gap;
  int order;  // within a phase: releases, cleanups, resets, probes and demands
  const ResolvedEdit* edit;
};

inline int kindOrder(Edit::Kind k) {
  switch (k) {
    case Edit::Kind::kRelease: return 0;
    case Edit::Kind::kCleanup: return 1;
    case Edit::Kind::kResetPeaks: return 2;
    case Edit::Kind::kProbe: return 3;
    case Edit::Kind::kDemand: return 4;
  }
  return 5;
}

// The event at which op `op` reaches its value, one definition with the recording's series
// (load_stage.cpp): reserved grows only at a segment_alloc / segment_map, so reserved is reached
// at the op's last one (the GUI's "first event where reserved exceeds every earlier value"); other
// quantities at the op's last event.
std::uint32_t reservedEventOf(const traces::DeviceTrace& trace, const Op& op);
std::uint32_t lastEventOf(const Op& op);

struct RepeatWatch;  // run_repeat.h

class Runner {
 public:
  Runner(const PreparedTrace& p, const std::vector<ResolvedEdit>& edits, const RunSettings& s);
  // A copy continues independently (checkpoints); its model talks to its own device.
  Runner(const Runner& other);
  Runner& operator=(const Runner&) = delete;
  ~Runner();

  // From here on, where the run's state at a boundary of `period` repeats the state one period
  // before (the same blocks, segments below the others moved down by one step, counters grown),
  // the run goes on whole periods at once to where the program or its edits stop repeating: the
  // state and result it reaches are those a replay of every op reaches (run_repeat.cpp). Only
  // runs that keep no figures per op or edit, and whose edits there are cleanups, go on so.
  void skipRepeats(const ProgramPeriod& period);

  // Replays to the end (or past settings.stop_after_op) and hands the result over (moved out:
  // result() is empty after it; the model's state stays for analyze()).
  RunResult run();
  // Applies the items due before op `next_op_` and runs that op.
  void step();
  void finish();
  [[nodiscard]] std::uint32_t nextOp() const { return next_op_; }
  [[nodiscard]] bool done() const { return next_op_ >= p_.program.ops.size(); }
  // More edits for the rest of the run (those placed before nextOp() are ignored).
  void addEdits(const std::vector<ResolvedEdit>& edits);
  // One more edit whose gaps' ops the caller knows (`ops[k]`: the op gap k runs before).
  void addEdit(const ResolvedEdit& edit, std::span<const std::uint32_t> ops);
  [[nodiscard]] PeakAnalysis analyze() const;
  [[nodiscard]] const sim::CachingAllocator& model() const { return model_; }
  [[nodiscard]] const RunResult& result() const { return r_; }
  // Hands the result over after finish() (result() is empty after it).
  [[nodiscard]] RunResult takeResult() { return std::move(r_); }
  // Moves the curves kept so far (keep_curves) to the end of `out`: a checkpoint copied after it
  // does not copy them.
  void moveCurvesTo(OpCurves& out);
  [[nodiscard]] sim::EventSink* wireSink();

 private:
  [[nodiscard]] StackId stackOf(std::size_t alloc_id) const {
    return p_.allocationStack(alloc_id);
  }
  // An edit's gap before op `op` (ignored when that op has run); sortItems() orders them.
  void addItem(std::uint32_t op, const Gap& g, const ResolvedEdit& e);
  void sortItems();
  void seed();
  void applyItem(const Item& item);
  void applyEdit(const Item& item);
  void recordEditFigure(const Item& item);
  void runOp(std::uint32_t j);
  void bindSlots();
  void holdSlot(std::uint32_t slot);
  [[nodiscard]] std::uint32_t slotOf(std::uint32_t op) const {
    return op_slots_ ? op_slots_[op] : p_.program.ops[op].slot;
  }
  void track(std::uint32_t j);
  [[nodiscard]] bool inWindow(std::uint32_t op) const;
  // run_repeat.cpp
  void atPeriodBoundary();
  [[nodiscard]] bool mayRepeat() const;
  bool skipRepeatedPeriods();
  [[nodiscard]] std::uint64_t repeatingEditPeriods(std::size_t earlier_next_item, std::uint64_t most) const;
  // Whether every live allocation is the earlier state's own or the one made a period after one
  // of its: the latter into `moved` (slot now, its allocation `periods` periods on, the slot that
  // one's malloc takes).
  [[nodiscard]] bool liveAllocationsOn(const sim::Repeat& repeat, std::uint64_t periods,
                                       std::vector<std::array<std::uint32_t, 3>>& moved) const;
  [[nodiscard]] std::int64_t reserved() const { return model_.totals().reserved; }
  [[nodiscard]] std::int64_t allocated() const { return model_.totals().allocated; }

  const PreparedTrace& p_;
  RunSettings s_;
  detail::WhatIfDevice device_;
  DriftSink drift_;
  RunnerSink sink_;
  sim::CachingAllocator model_;
  // The program's handle slots (in its ops; computed here, per op, for a program without them).
  std::shared_ptr<const HandleSlots> own_slots_;
  const HandleSlots* slots_ = nullptr;
  const std::uint32_t* op_slots_ = nullptr;  // own_slots_'s per op, or null: Op::slot
  // Per slot the live allocation's block (invalid when none) and its id; checkpoints copy these,
  // as many as the most allocations live at once so far (holdSlot).
  std::vector<sim::BlockHandle> slot_block_;
  std::vector<std::uint32_t> slot_alloc_;
  std::unordered_set<std::uint32_t> released_;  // freed early by a release edit
  std::vector<Item> items_;
  std::size_t next_item_ = 0;
  std::uint32_t next_op_ = 0;
  double reserved_sum_ = 0;  // for RunResult::mean_reserved
  std::uint64_t mallocs_ = 0;  // allocation requests run so far (OomInfo::request)
  RunResult r_;
  std::unique_ptr<RepeatWatch> watch_;  // skipRepeats: not copied with the run
};

}  // namespace reservoir::replay::detail
