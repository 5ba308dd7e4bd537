#include "snapshot_validate.h"

#include <fmt/format.h>

#include <string_view>
#include <unordered_set>

namespace reservoir::traces::detail {
namespace {

// The reader keeps negative ints as their 64-bit pattern, so a value with the top bit set was
// either a negative number or one at or beyond 2^63: both are said.
std::string asPython(std::uint64_t v) {
  if (v >> 63) return fmt::format("{} (or {} as a signed number)", v, static_cast<std::int64_t>(v));
  return std::to_string(v);
}

Status outOfRange(const std::string& where, std::string_view field, std::uint64_t v) {
  return Status::error(fmt::format("{}: '{}' is {}, outside [0, 2^62): not a real size or address (a damaged file?)",
                                   where, field, asPython(v)));
}

Status checkEvents(const Snapshot& snap) {
  for (std::size_t d = 0; d < snap.devices.size(); ++d) {
    const auto& events = snap.devices[d].events;
    for (std::size_t i = 0; i < events.size(); ++i) {
      const TraceEvent& e = events[i];
      if (e.size < kMaxByteValue && e.addr < kMaxByteValue) continue;
      const std::string where = fmt::format("device_traces[{}] entry {} ('{}')", d, i, actionName(e.action));
      if (e.size >= kMaxByteValue) return outOfRange(where, "size", e.size);
      return outOfRange(where, e.action == Action::kOom ? "device_free" : "addr", e.addr);
    }
  }
  return {};
}

Status checkSegments(const Snapshot& snap) {
  for (std::size_t i = 0; i < snap.segments.size(); ++i) {
    const SegmentInfo& s = snap.segments[i];
    const std::pair<std::string_view, std::uint64_t> fields[] = {{"address", s.address},
                                                                 {"total_size", s.total_size},
                                                                 {"allocated_size", s.allocated_size},
                                                                 {"active_size", s.active_size},
                                                                 {"requested_size", s.requested_size}};
    for (const auto& [name, v] : fields)
      if (v >= kMaxByteValue) return outOfRange(fmt::format("segments[{}]", i), name, v);
    if (s.device < 0 || static_cast<std::uint64_t>(s.device) >= kMaxDevices)
      return Status::error(fmt::format("segments[{}]: 'device' is {}, not a CUDA device number (0 to {})", i, s.device,
                                       kMaxDevices - 1));
    const std::span<const BlockInfo> blocks = snap.blocksOf(s);
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      const std::pair<std::string_view, std::uint64_t> block_fields[] = {
          {"address", blocks[b].address}, {"size", blocks[b].size}, {"requested_size", blocks[b].requested_size}};
      for (const auto& [name, v] : block_fields)
        if (v >= kMaxByteValue) return outOfRange(fmt::format("segments[{}]['blocks'][{}]", i, b), name, v);
    }
  }
  return {};
}

}  // namespace

void noteSegmentsOfNoDevice(Snapshot& snapshot) {
  if (snapshot.devices.empty()) return;  // no history: the segments are all there is
  // The listed devices once (up to 1024), not a search of them per segment.
  std::unordered_set<std::int64_t> listed;
  for (const DeviceTrace& d : snapshot.devices) listed.insert(d.device);
  for (std::size_t i = 0; i < snapshot.segments.size(); ++i)
    if (!listed.count(snapshot.segments[i].device))
      snapshot.anomalies.add(Anomaly::segment_of_no_device,
                             fmt::format("segments[{}] (device {})", i, snapshot.segments[i].device));
}

Status validateSnapshot(const Snapshot& snapshot) {
  if (snapshot.devices.size() > kMaxDevices)
    return Status::error(
        fmt::format("'device_traces' lists {} devices, more than the {} any machine has (a damaged "
                    "or hostile file?)",
                    snapshot.devices.size(), kMaxDevices));
  if (Status st = checkEvents(snapshot); !st.ok()) return st;
  if (Status st = checkSegments(snapshot); !st.ok()) return st;
  return {};
}

}  // namespace reservoir::traces::detail
