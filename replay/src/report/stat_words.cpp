#include "reservoir/replay/stat_words.h"

#include <array>
#include <utility>

namespace reservoir::replay {
namespace {

using Words = std::pair<std::string_view, std::string_view>;

// The quantity each stat array counts (c10/cuda/CUDACachingAllocator.h's DeviceStats).
constexpr std::array<Words, 11> kQuantities{{
    {"allocation", "allocations"},
    {"segment", "segments"},
    {"active", "active blocks"},
    {"inactive_split", "inactive split blocks"},
    {"allocated_bytes", "allocated bytes"},
    {"reserved_bytes", "reserved bytes"},
    {"active_bytes", "active bytes"},
    {"inactive_split_bytes", "inactive split bytes"},
    {"requested_bytes", "requested bytes"},
    {"oversize_allocations", "oversize allocations"},
    {"oversize_segments", "oversize segments"},
}};

constexpr std::array<Words, 3> kPools{{{"all", ""}, {"large_pool", "large-pool"}, {"small_pool", "small-pool"}}};

constexpr std::array<Words, 7> kScalars{{
    {"num_alloc_retries", "allocation retries (cache flushed and retried)"},
    {"num_ooms", "out-of-memory errors"},
    {"num_sync_all_streams", "synchronizations of all streams"},
    {"num_device_alloc", "cudaMalloc calls"},
    {"num_device_free", "cudaFree calls"},
    {"max_split_size", "max_split_size setting"},
    {"num_tracked_tensors", "tracked tensors"},
}};

std::string_view lookup(std::string_view key, const auto& table) {
  for (const auto& [k, w] : table)
    if (k == key) return w;
  return {};
}

// "current" / "peak" / "allocated" / "freed" around a quantity ("active small-pool blocks").
std::string withMetric(std::string_view metric, std::string thing) {
  if (metric == "current") return thing + " now";
  if (metric == "peak") return "peak of " + thing;
  if (metric == "allocated") return thing + " ever allocated";
  if (metric == "freed") return thing + " ever freed";
  return {};
}

}  // namespace

std::string statKeyWords(std::string_view key) {
  if (auto w = lookup(key, kScalars); !w.empty()) return std::string(w);
  // "<quantity>.<pool>.<metric>", or "<quantity>.<metric>" for the oversize counters.
  const auto last = key.rfind('.');
  if (last == std::string_view::npos) return std::string(key);
  const std::string_view metric = key.substr(last + 1);
  std::string_view head = key.substr(0, last);
  std::string_view pool_words;
  bool all_pools = false;
  if (const auto dot = head.rfind('.'); dot != std::string_view::npos) {
    const std::string_view pool = head.substr(dot + 1);
    bool known = false;
    for (const auto& [k, w] : kPools)
      if (k == pool) known = true, pool_words = w;
    if (!known) return std::string(key);
    all_pools = pool == "all";
    head = head.substr(0, dot);
  }
  const std::string_view quantity = lookup(head, kQuantities);
  if (quantity.empty()) return std::string(key);
  std::string thing(quantity);
  if (!pool_words.empty()) {
    // "active blocks" -> "active small-pool blocks": the pool goes before the counted noun.
    const auto space = thing.rfind(' ');
    const std::string pool = std::string(pool_words);
    thing = space == std::string::npos ? pool + " " + thing
                                       : thing.substr(0, space) + " " + pool + thing.substr(space);
  }
  std::string out = withMetric(metric, std::move(thing));
  if (out.empty()) return std::string(key);
  if (all_pools) out += " (all pools)";
  return out;
}

bool statKeyIsBytes(std::string_view key) {
  const auto dot = key.find('.');
  const std::string_view head = key.substr(0, dot);
  return head.size() > 6 && head.substr(head.size() - 6) == "_bytes";
}

}  // namespace reservoir::replay
