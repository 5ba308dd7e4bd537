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
#include <utility>
#include <vector>

#include "reservoir/core/status.h"
#include "reservoir/simulator/sizes.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::sim {

inline constexpr std::size_t kRoundupIntervals = 16;             // [1 MiB, 64 GiB) in powers of two
inline constexpr std::uint64_t kPinnedMaxRegisterThreads = 128;  // pinned_max_register_threads()

// An expandable segment's address-space reserve (expandable_segments_reserve, torch main
// after 2.11): a fraction of the device's total memory, or a number of GiB ("40G").
struct ReserveSpec {
  bool is_fraction = true;
  double value = 0.0;
  // The bytes it stands for on a device of `total` bytes (saturating).
  [[nodiscard]] ByteCount resolve(ByteCount total) const;
  bool operator==(const ReserveSpec&) const = default;
};

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
  // throw_on_cudamalloc_oom: with a memory fraction, a request whose new memory would take
  // the reserved bytes past the fraction fails at once (no release-and-retry).
  bool throw_on_cudamalloc_oom = false;
  std::optional<ReserveSpec> expandable_segments_reserve;  // unset: the historical 9/8
  // Per stream class; the snapshot does not record which class a stream was given, so the
  // model treats every stream as untagged (the global reserve applies).
  std::vector<std::pair<std::string, ReserveSpec>> expandable_segments_reserve_by_class;
  std::string last_settings;  // the last string parsed (what the snapshot records)
  // Keys skipped by a lenient parse (UnknownKeys::kSkip), in order, each once.
  std::vector<std::string> ignored_keys;
  // torch's non-fatal warnings while parsing (a bad reserve value keeps the default).
  std::vector<std::string> parse_warnings;

  // round_size(): the block size a request of `size` bytes gets.
  [[nodiscard]] ByteCount roundSize(ByteCount size) const;
  // The divisions that apply to `size` (0 or 1: plain 512-byte rounding).
  [[nodiscard]] ByteCount divisionsFor(ByteCount size) const;
  // get_allocation_size(): the segment size a new cudaMalloc for `rounded` gets.
  [[nodiscard]] ByteCount allocationSize(ByteCount rounded) const;
  [[nodiscard]] bool maxSplitSet() const { return max_split_size != kUnlimited; }
  // The address-space reserve of a new expandable segment on a device of `total` bytes:
  // 9/8 of it, or the configured reserve capped at that.
  [[nodiscard]] ByteCount expandableReserve(ByteCount total) const;
  // The canonical PYTORCH_CUDA_ALLOC_CONF text for these settings.
  [[nodiscard]] std::string toConfString() const;
};

// What a parse does with a key torch (as far as this model knows) does not have.
enum class UnknownKeys : std::uint8_t {
  kError,  // torch's behaviour: "Unrecognized key ..." (settings the user types)
  kSkip,   // skip the key and its value, note it in ignored_keys (recorded settings from a
           // newer torch: replay as if absent)
};

// Applies `conf` on top of `config` as torch's setAllocatorSettings does; on error `config`
// is left as torch leaves it (keys before the bad one applied) and the Status carries torch's
// message.
Status applyAllocConf(AllocatorConfig& config, std::string_view conf, UnknownKeys unknown = UnknownKeys::kError);

// A fresh config with `conf` applied.
Expected<AllocatorConfig> parseAllocConf(std::string_view conf);

// The settings a trace was recorded with: the recorded string for what the snapshot does not
// list, the recorded typed fields (which survive later parses) for the rest. Unknown keys in
// the recorded string are skipped (ignored_keys), never an error.
Expected<AllocatorConfig> configFromRecorded(const traces::RecordedSettings& recorded);

// Divisions table as torch prints it in allocator_settings ("1": d0, "2": d1, ... "32768": d15).
std::string roundupTableText(const AllocatorConfig& config);

}  // namespace reservoir::sim
