#include <algorithm>
#include <deque>

#include "reservoir/replay/whatif.h"
#include "whatif/run_engine.h"

namespace reservoir::replay {

struct StateIndex::Impl {
  const PreparedTrace& prepared;
  std::vector<ResolvedEdit> edits;
  RunSettings settings;
  std::uint32_t every;
  std::deque<detail::Runner> checkpoints;  // state before op k * every
  RunResult result;
  OpCurves curves;  // taken from the runner before each checkpoint (keep_curves)
  bool cancelled = false;

  Impl(const PreparedTrace& p, std::vector<ResolvedEdit> e, RunSettings s, std::uint32_t ev)
      : prepared(p), edits(std::move(e)), settings(std::move(s)), every(std::max<std::uint32_t>(ev, 1)) {}
};

StateIndex::StateIndex(const PreparedTrace& prepared, std::vector<ResolvedEdit> edits, RunSettings settings,
                       std::uint32_t every, const std::atomic<bool>* cancel,
                       std::function<void(std::size_t, std::size_t)> progress)
    : impl_(std::make_unique<Impl>(prepared, std::move(edits), std::move(settings), every)) {
  Impl& m = *impl_;
  m.settings.stop_after_op.reset();
  m.settings.analyze_peak = false;
  detail::Runner runner(prepared, m.edits, m.settings);
  const auto n = prepared.program.ops.size();
  while (!runner.done()) {
    if (runner.nextOp() % m.every == 0) {
      if (m.settings.keep_curves) runner.moveCurvesTo(m.curves);
      m.checkpoints.emplace_back(runner);
      if (progress) progress(runner.nextOp(), n);
      if (cancel && cancel->load(std::memory_order_relaxed)) {
        m.cancelled = true;
        break;
      }
    }
    runner.step();
  }
  if (m.settings.keep_curves) runner.moveCurvesTo(m.curves);
  runner.finish();
  m.result = runner.result();
}

OpCurves StateIndex::takeCurves() { return std::move(impl_->curves); }

StateIndex::~StateIndex() = default;

const RunResult& StateIndex::result() const { return impl_->result; }
bool StateIndex::cancelled() const { return impl_->cancelled; }
const PreparedTrace& StateIndex::prepared() const { return impl_->prepared; }

std::vector<sim::SegmentView> StateIndex::segmentsAfterOp(std::uint32_t op) const {
  const Impl& m = *impl_;
  if (m.checkpoints.empty()) return {};
  const std::uint32_t target = op == kNoOp ? 0 : op + 1;  // ops to have run
  const std::size_t k = std::min<std::size_t>(target / m.every, m.checkpoints.size() - 1);
  detail::Runner runner(m.checkpoints[k]);
  while (!runner.done() && runner.nextOp() < target) runner.step();
  return runner.model().segments();
}

std::uint32_t StateIndex::opAtEvent(std::uint32_t event) const {
  // The op containing `event` starts at or before it: the last op whose first event <= event.
  const std::size_t after = OpFirstEvents(impl_->prepared.program.ops).upperBound(event);
  return after == 0 ? 0 : static_cast<std::uint32_t>(after - 1);
}

}  // namespace reservoir::replay
