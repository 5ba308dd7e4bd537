#include "conformance/final_state_checks.h"

#include <fmt/format.h>

#include <set>

namespace reservoir::replay::detail {
namespace {

constexpr std::size_t kMaxMismatches = 20;

void add(ConformanceReport& r, std::string what, std::string expected, std::string simulated) {
  if (r.layout_mismatches.size() < kMaxMismatches)
    r.layout_mismatches.push_back(Mismatch{std::move(what), std::move(expected), std::move(simulated)});
}

std::string blockText(sim::Addr a, sim::ByteCount size, traces::BlockState st, sim::ByteCount req) {
  return fmt::format("{:#x} size={} {} requested={}", a, size, traces::blockStateName(st), req);
}

void compareBlocks(const traces::Snapshot& snap, const traces::SegmentInfo& want, const sim::SegmentView& got,
                   bool window_complete, ConformanceReport& r) {
  const auto blocks = snap.blocksOf(want);
  if (blocks.size() != got.blocks.size()) {
    add(r, fmt::format("segment {:#x}: block count", want.address), std::to_string(blocks.size()),
        std::to_string(got.blocks.size()));
    return;
  }
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const auto& w = blocks[i];
    const auto& g = got.blocks[i];
    // A free block's requested_size is stale (the last request of that Block object); for
    // blocks older than a truncated trace's window it cannot be known.
    const bool req_knowable = window_complete || w.state != traces::BlockState::kInactive;
    if (w.address != g.address || w.size != g.size || w.state != g.state ||
        (req_knowable && w.requested_size != g.requested_size))
      add(r, fmt::format("segment {:#x}: block {}", want.address, i),
          blockText(w.address, w.size, w.state, w.requested_size),
          blockText(g.address, g.size, g.state, g.requested_size));
  }
}

}  // namespace

void compareLayout(const traces::Snapshot& snap, std::int64_t device, const std::vector<sim::SegmentView>& model,
                   ConformanceReport& r) {
  std::vector<const traces::SegmentInfo*> want;
  for (const auto& s : snap.segments)
    if (s.device == device) want.push_back(&s);
  if (want.size() != model.size()) add(r, "segment count", std::to_string(want.size()), std::to_string(model.size()));
  for (std::size_t i = 0; i < want.size() && i < model.size(); ++i) {
    const traces::SegmentInfo& w = *want[i];
    const sim::SegmentView& g = model[i];
    if (w.address != g.address || w.total_size != g.total_size || w.stream != g.stream || w.is_large != g.is_large ||
        w.is_expandable != g.is_expandable || w.pool != g.pool || w.allocated_size != g.allocated_size ||
        w.active_size != g.active_size) {
      add(r, fmt::format("segment {}", i),
          fmt::format("{:#x} size={} stream={} {}{} allocated={} active={}", w.address, w.total_size, w.stream,
                      w.is_large ? "large" : "small", w.is_expandable ? " expandable" : "", w.allocated_size,
                      w.active_size),
          fmt::format("{:#x} size={} stream={} {}{} allocated={} active={}", g.address, g.total_size, g.stream,
                      g.is_large ? "large" : "small", g.is_expandable ? " expandable" : "", g.allocated_size,
                      g.active_size));
      continue;
    }
    compareBlocks(snap, w, g, r.window_complete, r);
  }
}

void compareStats(const sim::DeviceStats& stats, const CaptureFacts* capture, ConformanceReport& r) {
  if (!capture || capture->memory_stats.empty()) return;
  const auto mine = sim::memoryStatsMap(stats);
  for (const auto& [key, value] : capture->memory_stats) {
    auto it = mine.find(key);
    if (it == mine.end()) continue;
    const bool current = key.size() > 8 && key.compare(key.size() - 8, 8, ".current") == 0;
    if (!r.window_complete && !current && key != "max_split_size") continue;  // history before the window
    if (key == "num_sync_all_streams") continue;  // empty_cache calls that release nothing leave no event
    r.stats_compared.push_back(key);
    if (it->second != value)
      r.stats_mismatches.push_back(Mismatch{key, std::to_string(value), std::to_string(it->second)});
  }
}

}  // namespace reservoir::replay::detail
