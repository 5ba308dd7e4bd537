// Per-event anomalies: counted, shown, never silently skipped (the second error tier).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace reservoir::traces {

enum class Severity : std::uint8_t { kInfo, kDataLoss, kError };

// X(name, severity, description)
#define RESERVOIR_ANOMALIES(X)                                                                                  \
  X(unknown_top_level_key, kInfo, "snapshot key not understood by this version (kept out of the model)")        \
  X(unknown_event_key, kInfo, "trace entry key not understood by this version (ignored)")                       \
  X(unknown_segment_key, kInfo, "segment key not understood by this version (ignored)")                         \
  X(unknown_block_key, kInfo, "block key not understood by this version (ignored)")                             \
  X(unknown_frame_key, kInfo, "frame key not understood (e.g. FX fields; ignored)")                             \
  X(unknown_settings_key, kInfo, "allocator_settings key not understood (kept as text)")                        \
  X(unknown_action, kDataLoss, "trace entry with an action this version does not know")                         \
  X(event_missing_field, kDataLoss, "trace entry without a field its action needs (taken as 0)")                \
  X(oom_without_device_free, kDataLoss, "the oom entry records no device_free: no capacity is taken from it")   \
  X(unknown_block_state, kDataLoss, "block state string not understood")                                        \
  X(free_without_alloc, kInfo, "free of a block allocated before the trace window")                             \
  X(free_of_unknown_address, kError, "free_requested/free_completed at an address with no live block")          \
  X(alloc_over_live_block, kError, "alloc at an address that already holds a live block")                       \
  X(free_completed_without_request, kError, "free_completed with no free_requested before it")                  \
  X(segment_event_mismatch, kError, "segment_free/unmap that matches no known segment")                         \
  X(segment_of_no_device, kDataLoss, "segment whose device has no entry in device_traces (no device shows it)") \
  X(snapshot_entries, kInfo, "'snapshot' entries (markers of earlier snapshots; no state change)")              \
  X(user_defined_entries, kInfo, "'user_defined' entries (annotations of torch ~2.4; no state change)")         \
  X(time_goes_backwards, kDataLoss, "trace entry whose time_us is earlier than the entry before it (times unreliable)")

enum class Anomaly : std::uint8_t {
#define RESERVOIR_ANOMALY_ENUM(name, severity, description) name,
  RESERVOIR_ANOMALIES(RESERVOIR_ANOMALY_ENUM)
#undef RESERVOIR_ANOMALY_ENUM
      kCount
};

struct AnomalyInfo {
  std::string_view name;
  Severity severity;
  std::string_view description;
};

const AnomalyInfo& anomalyInfo(Anomaly anomaly);
std::string_view severityName(Severity severity);

class AnomalyCounters {
 public:
  static constexpr std::size_t kCount = static_cast<std::size_t>(Anomaly::kCount);
  static constexpr std::size_t kMaxExamples = 8;

  void add(Anomaly anomaly, std::string_view example = {}, std::uint64_t count = 1);
  [[nodiscard]] std::uint64_t count(Anomaly anomaly) const { return counts_[index(anomaly)]; }
  [[nodiscard]] const std::vector<std::string>& examples(Anomaly anomaly) const { return examples_[index(anomaly)]; }
  [[nodiscard]] std::uint64_t total() const;
  [[nodiscard]] std::uint64_t total(Severity at_least) const;
  void merge(const AnomalyCounters& other);

 private:
  static std::size_t index(Anomaly anomaly) { return static_cast<std::size_t>(anomaly); }
  std::array<std::uint64_t, kCount> counts_{};
  std::array<std::vector<std::string>, kCount> examples_{};
};

}  // namespace reservoir::traces
