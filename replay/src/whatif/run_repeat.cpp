// A run that goes on whole periods at once where its state repeats (Runner::skipRepeats).
//
// At each boundary of the program's period the run compares its state with the state one period
// before: the allocator's blocks in address order (sizes, streams, splits, what is allocated,
// pending stream uses and events), the device's segments and the driver's chunks, the handle
// slots. Two states repeat when they differ only as one more period moves them: the segments
// below some address one step lower (the driver model puts each new segment below all others),
// the rest where they were; tags of allocations made one period later one period's allocations
// higher; counters grown. The model decides by the order of addresses and offsets within a
// segment, the driver model by the order of its chunks and offsets within them, and the program
// and its edits repeat: so the next period does again what the last one did, moved once more,
// and so does each after it. The run then adds that many periods to the state and the result
// (counts grown, reserved bytes summed op by op as the replay sums them, peaks as they were: no
// period reaches higher than the one that repeated) and goes on from there.
#include <algorithm>
#include <unordered_map>

#include "whatif/run_engine.h"
#include "whatif/run_repeat.h"

namespace reservoir::replay::detail {

void Runner::skipRepeats(const ProgramPeriod& period) {
  if (!period.found() || !mayRepeat()) return;
  watch_ = std::make_unique<RepeatWatch>();
  watch_->period = &period;
  const std::uint32_t from = std::max(next_op_, period.start);
  const std::uint32_t periods_in = (from - period.start + period.ops - 1) / period.ops;
  watch_->next_boundary = period.start + periods_in * period.ops;
  if (next_op_ == watch_->next_boundary) atPeriodBoundary();
}

bool Runner::mayRepeat() const {
  return !s_.keep_timeline && !s_.keep_curves && !s_.figures_at_edits && !s_.record_events &&
         !s_.compare_with_recording && s_.peak_windows.empty() && !s_.stop_after_op && released_.empty() && !r_.oom &&
         r_.invariant_failure.empty();
}

void Runner::atPeriodBoundary() {
  RepeatWatch& w = *watch_;
  const ProgramPeriod& period = *w.period;
  if (w.earlier) skipRepeatedPeriods();
  const RepeatWatch::Figures figures{model_.totals(), model_.outstandingEvents().size(), device_.used()};
  if (w.last == figures && mayRepeat())
    w.earlier =
        RepeatWatch::Earlier{model_, device_, slot_block_, slot_alloc_, r_.empty_cache_calls, mallocs_, next_item_};
  else
    w.earlier.reset();
  w.last = figures;
  w.reserved.clear();
  w.next_boundary = next_op_ + period.ops;
  if (static_cast<std::uint64_t>(w.next_boundary) + period.ops > period.end) watch_.reset();
}

// How many periods on from here the edits repeat those of the last period (cleanups only), at
// most `most`.
std::uint64_t Runner::repeatingEditPeriods(std::size_t earlier_next_item, std::uint64_t most) const {
  const std::uint32_t ops = watch_->period->ops;
  const std::size_t q = next_item_ - earlier_next_item;
  for (std::size_t i = earlier_next_item; i < next_item_; ++i)
    if (items_[i].edit->edit.kind != Edit::Kind::kCleanup) return 0;
  std::uint64_t t = 0;
  for (; t < most; ++t) {
    const std::size_t from = next_item_ + t * q;
    const std::uint64_t period_end = next_op_ + (t + 1) * ops;
    if (from + q > items_.size()) break;
    bool same = true;
    for (std::size_t k = 0; same && k < q; ++k) {
      const Item& a = items_[earlier_next_item + k];
      const Item& b = items_[from + k];
      same = b.op == a.op + (t + 1) * ops && b.edit == a.edit && b.gap.phase == a.gap.phase && b.order == a.order;
    }
    if (!same || (from + q < items_.size() && items_[from + q].op < period_end)) break;
  }
  return t;
}

bool Runner::liveAllocationsOn(const sim::Repeat& repeat, std::uint64_t periods,
                               std::vector<std::array<std::uint32_t, 3>>& moved) const {
  const RepeatWatch::Earlier& e = *watch_->earlier;
  const ProgramPeriod& period = *watch_->period;
  std::unordered_map<std::uint32_t, std::uint32_t> earlier_block;  // allocation id -> block
  for (std::size_t s = 0; s < e.slot_block.size(); ++s)
    if (e.slot_block[s].valid()) earlier_block.emplace(e.slot_alloc[s], e.slot_block[s].index);
  // Each live allocation is the earlier state's (a long-lived one: it keeps its slot) or the one
  // made a period after it, whose own allocation `periods` periods on takes the slot its malloc
  // takes: found by going back over the program from where the run goes on.
  std::unordered_map<std::uint32_t, std::size_t> wanted;  // allocation id `periods` on -> index in `moved`
  std::size_t live = 0;
  for (std::uint32_t s = 0; s < slot_block_.size(); ++s) {
    if (!slot_block_[s].valid()) continue;
    ++live;
    const std::uint32_t id = slot_alloc_[s], block = slot_block_[s].index;
    const std::uint32_t then = block < repeat.earlier_of.size() ? repeat.earlier_of[block] : ~0u;
    if (const auto it = earlier_block.find(id); it != earlier_block.end() && it->second == then) continue;
    const auto it = earlier_block.find(static_cast<std::uint32_t>(id - period.allocs));
    if (it == earlier_block.end() || it->second != then) return false;
    wanted.emplace(static_cast<std::uint32_t>(id + period.allocs * periods), moved.size());
    moved.push_back({s, static_cast<std::uint32_t>(id + period.allocs * periods), HandleSlots::kNone});
  }
  if (live != earlier_block.size()) return false;
  std::size_t found = 0;
  const std::uint64_t to = next_op_ + periods * period.ops;
  for (std::uint64_t j = to; j-- > period.start && found < wanted.size();) {
    const Op& op = p_.program.ops[j];
    if (op.kind != OpKind::kMalloc || !op.alloc.valid()) continue;
    if (const auto it = wanted.find(static_cast<std::uint32_t>(op.alloc.value())); it != wanted.end()) {
      moved[it->second][2] = slotOf(static_cast<std::uint32_t>(j));
      ++found;
    }
  }
  return found == wanted.size() &&
         std::none_of(moved.begin(), moved.end(), [](const auto& m) { return m[2] == HandleSlots::kNone; });
}

bool Runner::skipRepeatedPeriods() {
  RepeatWatch& w = *watch_;
  const RepeatWatch::Earlier& e = *w.earlier;
  const ProgramPeriod& period = *w.period;
  if (!mayRepeat() || !device_.placesByDriverModel() || !e.device.placesByDriverModel()) return false;
  const auto addresses = device_.addressStepSince(e.device);
  if (!addresses) return false;
  std::uint64_t periods = (period.end - next_op_) / period.ops;
  if (addresses->step != 0)  // the floor stays above address 0
    periods = std::min<std::uint64_t>(periods, device_.floor() / addresses->step);
  periods = repeatingEditPeriods(e.next_item, periods);
  if (periods == 0) return false;
  const std::uint32_t ops = period.ops;
  sim::RepeatRules rules{*addresses, period.allocs, [&](std::uint64_t now, std::uint64_t then) {
                           const std::uint32_t a = p_.completionOf(now), b = p_.completionOf(then);
                           return b == kNoOp ? a == kNoOp : a != kNoOp && a == b + ops;
                         }};
  const auto repeat = model_.repeatOf(e.model, rules);
  std::vector<std::array<std::uint32_t, 3>> moved;  // slot now, the allocation `periods` on, its slot
  if (!repeat || !liveAllocationsOn(*repeat, periods, moved)) return false;

  model_.advance(*repeat, periods);
  device_.advance(e.device, *addresses, periods);
  std::vector<sim::BlockHandle> blocks;
  for (const auto& m : moved) {
    blocks.push_back(slot_block_[m[0]]);
    slot_block_[m[0]] = sim::BlockHandle{};
  }
  for (std::size_t k = 0; k < moved.size(); ++k) {
    holdSlot(moved[k][2]);
    slot_block_[moved[k][2]] = blocks[k];
    slot_alloc_[moved[k][2]] = moved[k][1];
  }
  r_.empty_cache_calls += (r_.empty_cache_calls - e.empty_cache_calls) * periods;
  mallocs_ += (mallocs_ - e.mallocs) * periods;
  for (std::uint64_t t = 0; t < periods; ++t)  // as the replay adds them, one op at a time
    for (std::int64_t v : w.reserved) reserved_sum_ += static_cast<double>(v);
  next_item_ += (next_item_ - e.next_item) * periods;
  next_op_ += static_cast<std::uint32_t>(periods * ops);
  r_.periods_skipped += periods;
  return true;
}

}  // namespace reservoir::replay::detail
