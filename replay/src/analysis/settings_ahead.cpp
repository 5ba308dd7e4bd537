#include "analysis/settings_ahead.h"

#include "whatif/run_engine.h"

namespace reservoir::replay {

SettingsAhead::SettingsAhead(const PreparedTrace& p, const std::vector<ResolvedEdit>& observe, const RunSettings& base,
                             std::vector<sim::AllocatorConfig> configs, bool start, const detail::ProgramPeriod* period)
    : p_(p), observe_(observe), base_(base), configs_(std::move(configs)), period_(period), claimed_(configs_.size()),
      results_(configs_.size()) {
  if (start && !configs_.empty()) thread_ = std::thread([this] { run(); });
}

SettingsAhead::~SettingsAhead() { finish(); }

RunResult SettingsAhead::replay(std::size_t k) const {
  RunSettings s = base_;
  s.config = configs_[k];
  if (!period_ || s.analyze_peak) return replayProgram(p_, observe_, s);
  detail::Runner runner(p_, observe_, s);
  runner.skipRepeats(*period_);
  return runner.run();
}

void SettingsAhead::run() {
  for (std::size_t k = 0; k < configs_.size(); ++k) {
    if (stop_.load() || (base_.cancel && base_.cancel->load())) return;
    if (claim(k)) results_[k] = replay(k);
  }
}

void SettingsAhead::finish(bool all) {
  if (!all) stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::optional<RunResult> SettingsAhead::take(std::size_t k) {
  finish();
  return std::move(results_[k]);
}

}  // namespace reservoir::replay
