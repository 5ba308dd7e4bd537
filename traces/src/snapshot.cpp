#include "reservoir/traces/snapshot.h"

#include <array>

namespace reservoir::traces {
namespace {

constexpr std::array<std::string_view, kActionCount> kActionNames = {
    "alloc",        "free_requested", "free_completed", "segment_alloc",
    "segment_free", "segment_map",    "segment_unmap",  "snapshot",
    "oom",          "user_defined",   "unknown"};

}  // namespace

std::string_view actionName(Action action) { return kActionNames[static_cast<std::size_t>(action)]; }

std::vector<std::pair<std::string_view, std::string_view>> fxFields(std::string_view fx) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  while (!fx.empty()) {
    const std::size_t end = fx.find('\n');
    const std::string_view line = fx.substr(0, end);
    const std::size_t eq = line.find('=');
    if (eq != std::string_view::npos) out.emplace_back(line.substr(0, eq), line.substr(eq + 1));
    if (end == std::string_view::npos) break;
    fx.remove_prefix(end + 1);
  }
  return out;
}

std::optional<Action> parseAction(std::string_view name) {
  for (std::size_t i = 0; i + 1 < kActionCount; ++i)
    if (kActionNames[i] == name) return static_cast<Action>(i);
  return std::nullopt;
}

std::string_view blockStateName(BlockState state) {
  switch (state) {
    case BlockState::kActiveAllocated: return "active_allocated";
    case BlockState::kActivePendingFree: return "active_pending_free";
    case BlockState::kInactive: return "inactive";
    case BlockState::kUnknown: break;
  }
  return "unknown";
}

std::optional<BlockState> parseBlockState(std::string_view name) {
  if (name == "active_allocated") return BlockState::kActiveAllocated;
  if (name == "active_pending_free" || name == "active_awaiting_free") return BlockState::kActivePendingFree;
  if (name == "inactive") return BlockState::kInactive;
  return std::nullopt;
}

std::string_view compressionName(Compression compression) {
  switch (compression) {
    case Compression::kNone: return "none";
    case Compression::kGzip: return "gzip";
    case Compression::kZstd: return "zstd";
  }
  return "?";
}

std::span<const FrameId> Snapshot::stack(StackId id) const {
  const std::uint32_t i = id.valid() ? id.value() : 0;
  if (i + 1 >= stack_offsets.size()) return {};
  return std::span<const FrameId>(stack_frames).subspan(stack_offsets[i], stack_offsets[i + 1] - stack_offsets[i]);
}

StackId Snapshot::callStack(const TraceEvent& e) const {
  const EventExtra& x = extra(e);
  return x.has_forward_frames && stack(e.stack).empty() ? x.forward_stack : e.stack;
}

std::span<const BlockInfo> Snapshot::blocksOf(const SegmentInfo& segment) const {
  return std::span<const BlockInfo>(blocks).subspan(segment.first_block, segment.block_count);
}

std::size_t Snapshot::busiestDevice() const {
  std::size_t best = 0;
  for (std::size_t i = 1; i < devices.size(); ++i)
    if (devices[i].events.size() > devices[best].events.size()) best = i;
  return best;
}

const DeviceTrace* Snapshot::findDevice(std::int64_t device) const {
  for (const auto& d : devices)
    if (d.device == device) return &d;
  return nullptr;
}

}  // namespace reservoir::traces
