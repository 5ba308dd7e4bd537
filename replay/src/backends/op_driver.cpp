// The op driver: the loop every backend runs its edited program with (cancel, progress, the
// current op, per-op dispatch, failed mallocs, probes, demands, peaks, timing). The backends
// bring only what executing an op means for them (an OpTarget).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "reservoir/replay/backend.h"

namespace reservoir::replay {
namespace {

std::string editText(const EditedProgram& prog, const BackendOp& op) {
  return op.edit >= 0 ? prog.edits[static_cast<std::size_t>(op.edit)] : std::string();
}

void dispatch(const ReplayJob& job, std::size_t i, const BackendOp& op, OpTarget& target, BackendResult& r) {
  const EditedProgram& prog = *job.program;
  switch (op.kind) {
    case BackendOpKind::kMalloc:
      if (!target.allocate(op)) {
        if (!r.first_oom) r.first_oom = i;
        ++r.ooms;
      }
      break;
    case BackendOpKind::kFree: target.deallocate(op); break;
    case BackendOpKind::kEmptyCache: target.emptyCache(i, op); break;
    case BackendOpKind::kProbe: {
      const OpTarget::Figures f = target.read(OpTarget::Reading::kProbe);
      r.probes.push_back(Probe{editText(prog, op), f.reserved, f.allocated, f.active, op.boundary});
      break;
    }
    case BackendOpKind::kResetPeaks:
      target.resetPeaks();
      r.peak_reserved = PeakInfo{};
      r.peak_allocated = PeakInfo{};
      break;
    case BackendOpKind::kDemand: {
      const std::int64_t reserved = target.read(OpTarget::Reading::kDemand).reserved;
      DemandResult d{editText(prog, op), op.size, job.usable.has_value(), true, 0};
      if (job.usable) {
        d.free = static_cast<std::int64_t>(*job.usable) - reserved;
        d.fits = d.free >= static_cast<std::int64_t>(op.size);
      }
      r.demands.push_back(d);
      break;
    }
  }
}

// Peaks after the program's own ops, as the what-if runner tracks them.
void trackPeaks(const BackendOp& op, OpTarget& target, BackendResult& r) {
  const OpTarget::Figures f = target.read(OpTarget::Reading::kPeak);
  if (f.reserved > r.peak_reserved.bytes || r.peak_reserved.op == kNoOp)
    r.peak_reserved = PeakInfo{f.reserved, op.op, 0, 0, {}};
  if (f.allocated > r.peak_allocated.bytes || r.peak_allocated.op == kNoOp)
    r.peak_allocated = PeakInfo{f.allocated, op.op, 0, 0, {}};
}

}  // namespace

void driveOps(const ReplayJob& job, CompletionSchedule& schedule, OpTarget& target, bool track_peaks,
              BackendResult& r) {
  using Clock = std::chrono::steady_clock;
  const EditedProgram& prog = *job.program;
  const std::size_t n = prog.ops.size();
  const std::size_t progress_every = std::max<std::size_t>(1, n / 200);
  const auto t0 = Clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    if (job.cancel && job.cancel->load(std::memory_order_relaxed)) {
      r.notes.push_back(fmt::format("interrupted after {} of {} ops", i, n));
      r.interrupted = true;
      break;
    }
    const BackendOp& op = prog.ops[i];
    if (op.op != kNoOp) schedule.setCurrentOp(op.op);
    target.before(i, op);
    dispatch(job, i, op, target, r);
    target.after(i, op);
    if (op.op != kNoOp && track_peaks) trackPeaks(op, target, r);
    ++r.ops_executed;
    if (job.progress && i % progress_every == 0) job.progress(i, n);
  }
  r.timing.wall_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (job.progress) job.progress(n, n);
}

}  // namespace reservoir::replay
