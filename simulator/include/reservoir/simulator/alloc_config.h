// Allocator settings and the PYTORCH_CUDA_ALLOC_CONF parser, with torch 2.11's exact rules
// (tokens split on , : [ ], whitespace dropped, each parse resets max_split_size,
// roundup_power2_divisions and garbage_collection_threshold but not expandable_segments,
// the same error texts). See docs/allocator-config.md for the probe that pinned them down.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "reservoir/core/status.h"
#include "reservoir/simulator/sizes.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::sim {

inline constexpr std::size_t kRoundupIntervals = 16;  // [1 MiB, 64 GiB) in powers of two

struct AllocatorConfig {
  ByteCount max_split_size = kUnlimited;
  ByteCount max_non_split_rounding_size = kDefaultLargeSegment;
  double garbage_collection_threshold = 0.0;
  std::array<ByteCount, kRoundupIntervals> roundup_power2_divisions{};
  bool expandable_segments = false;
  ByteCount large_segment_size = kDefaultLargeSegment;
  std::optional<double> per_process_memory_fraction;  // from the string; --fraction overrides
  bool release_lock_on_cudamalloc = false;
  bool graph_capture_record_stream_reuse = false;
  std::string last_settings;  // the last string parsed (what the snapshot records)

  // round_size(): the block size a request of `size` bytes gets.
  [[nodiscard]] ByteCount roundSize(ByteCount size) const;
  // The divisions that apply to `size` (0 or 1: plain 512-byte rounding).
  [[nodiscard]] ByteCount divisionsFor(ByteCount size) const;
  // get_allocation_size(): the segment size a new cudaMalloc for `rounded` gets.
  [[nodiscard]] ByteCount allocationSize(ByteCount rounded) const;
  [[nodiscard]] bool maxSplitSet() const { return max_split_size != kUnlimited; }
  // The canonical PYTORCH_CUDA_ALLOC_CONF text for these settings.
  [[nodiscard]] std::string toConfString() const;
};

// Applies `conf` on top of `config` as torch's setAllocatorSettings does; on error `config`
// is left as torch leaves it (keys before the bad one applied) and the Status carries torch's
// message.
Status applyAllocConf(AllocatorConfig& config, std::string_view conf);

// A fresh config with `conf` applied.
Expected<AllocatorConfig> parseAllocConf(std::string_view conf);

// The settings a trace was recorded with: the recorded string for what the snapshot does not
// list, the recorded typed fields (which survive later parses) for the rest.
Expected<AllocatorConfig> configFromRecorded(const traces::RecordedSettings& recorded);

// Divisions table as torch prints it in allocator_settings ("1": d0, "2": d1, ... "32768": d15).
std::string roundupTableText(const AllocatorConfig& config);

}  // namespace reservoir::sim
