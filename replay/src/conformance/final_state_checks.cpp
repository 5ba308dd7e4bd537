#include "conformance/final_state_checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

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
    std::vector<std::string_view> f;
    if (w.address != g.address) f.push_back("address");
    if (w.size != g.size) f.push_back("size");
    if (w.state != g.state) f.push_back("state");
    if (req_knowable && w.requested_size != g.requested_size) f.push_back("requested size");
    if (!f.empty())
      add(r, fmt::format("segment {:#x}: block {}: {}", want.address, i, fmt::join(f, ", ")),
          blockText(w.address, w.size, w.state, w.requested_size),
          blockText(g.address, g.size, g.state, g.requested_size));
  }
}

// "pool, allocated": the fields in which a segment of the model differs from the snapshot's.
std::string differingSegmentFields(const traces::SegmentInfo& w, const sim::SegmentView& g) {
  std::vector<std::string_view> f;
  if (w.address != g.address) f.push_back("address");
  if (w.total_size != g.total_size) f.push_back("size");
  if (w.stream != g.stream) f.push_back("stream");
  if (w.is_large != g.is_large) f.push_back("pool kind (small/large)");
  if (w.is_expandable != g.is_expandable) f.push_back("expandable");
  if (w.pool != g.pool) f.push_back("pool id");
  if (w.allocated_size != g.allocated_size) f.push_back("allocated");
  if (w.active_size != g.active_size) f.push_back("active");
  return fmt::format("{}", fmt::join(f, ", "));
}

// Every field compared above, so that two segments that differ never print the same line.
template <typename S>
std::string segmentText(const S& s) {
  const sim::Addr a = s.address;
  return fmt::format("{:#x} size={} stream={} {}{} pool=({},{}) allocated={} active={}", a, s.total_size, s.stream,
                     s.is_large ? "large" : "small", s.is_expandable ? " expandable" : "", s.pool.first, s.pool.second,
                     s.allocated_size, s.active_size);
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
    const std::string fields = differingSegmentFields(w, g);
    if (!fields.empty()) {
      add(r, fmt::format("segment {}: {}", i, fields), segmentText(w), segmentText(g));
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
