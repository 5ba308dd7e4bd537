// A sweep's settings candidates replayed ahead: on a thread of their own while the placements
// are found and the baseline is replayed, since their runs need neither (each is a whole run
// from the start under other settings). The sweep's workers claim the ones the thread has not
// started and replay those themselves; the rest they take from it at the end.
#pragma once

#include <atomic>
#include <deque>
#include <optional>
#include <thread>
#include <vector>

#include "reservoir/replay/whatif.h"
#include "whatif/program_period.h"

namespace reservoir::replay {

class SettingsAhead {
 public:
  // Starts the thread only when `start` (a sweep on one thread has no core to spare).
  // `period`, when given (and kept by the caller), lets each run go on whole periods where its
  // state repeats (Runner::skipRepeats).
  SettingsAhead(const PreparedTrace& p, const std::vector<ResolvedEdit>& observe, const RunSettings& base,
                std::vector<sim::AllocatorConfig> configs, bool start, const detail::ProgramPeriod* period = nullptr);
  ~SettingsAhead();
  SettingsAhead(const SettingsAhead&) = delete;
  SettingsAhead& operator=(const SettingsAhead&) = delete;

  // The run of configs[k] under `base`, `observe` edits included: what a worker replays itself.
  [[nodiscard]] RunResult replay(std::size_t k) const;
  // True when the caller is the first to claim configs[k] (and replays it); false when the
  // thread has it: take(k) after finish().
  bool claim(std::size_t k) { return !claimed_[k].exchange(true); }
  // Waits for the thread: it starts no run after this, or (`all`) runs every one it can claim first.
  void finish(bool all = false);
  // The thread's run of configs[k], after finish(); empty if it did not run it.
  std::optional<RunResult> take(std::size_t k);

 private:
  void run();
  const PreparedTrace& p_;
  const std::vector<ResolvedEdit> observe_;  // a copy: the caller's may go first
  RunSettings base_;
  std::vector<sim::AllocatorConfig> configs_;
  const detail::ProgramPeriod* period_;
  std::deque<std::atomic<bool>> claimed_;  // all false (an atomic is value-initialised)
  std::vector<std::optional<RunResult>> results_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace reservoir::replay
