#include "reservoir/traces/window_start.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace reservoir::traces {
namespace {

using SegmentMap = std::map<Addr, StartSegment>;

// Expandable segments appear as mapped runs; walking back, a segment_map removes a range from
// the runs and a segment_unmap adds one back.
struct MappedRuns {
  std::map<Addr, std::pair<ByteCount, StreamValue>> runs;  // start -> (size, stream)

  Status removeRange(Addr addr, ByteCount size, std::size_t event) {
    auto it = runs.upper_bound(addr);
    if (it == runs.begin()) return notFound(addr, size, event);
    --it;
    const Addr start = it->first;
    const auto [run_size, stream] = it->second;
    if (addr + size > start + run_size) return notFound(addr, size, event);
    runs.erase(it);
    if (addr > start) runs[start] = {addr - start, stream};
    if (addr + size < start + run_size) runs[addr + size] = {start + run_size - addr - size, stream};
    return {};
  }
  void addRange(Addr addr, ByteCount size, StreamValue stream) {
    Addr start = addr;
    ByteCount total = size;
    auto next = runs.find(addr + size);
    if (next != runs.end() && next->second.second == stream) {
      total += next->second.first;
      runs.erase(next);
    }
    auto it = runs.lower_bound(addr);
    if (it != runs.begin()) {
      --it;
      if (it->first + it->second.first == addr && it->second.second == stream) {
        start = it->first;
        total += it->second.first;
        runs.erase(it);
      }
    }
    runs[start] = {total, stream};
  }
  static Status notFound(Addr addr, ByteCount size, std::size_t event) {
    return Status::error(
        fmt::format("event {}: segment_map at {:#x} ({} bytes) is not mapped later", event, addr, size));
  }
};

// Segments at the first event: the final ones, minus those allocated in the window, plus
// those freed in it.
Status undoSegmentEvents(const DeviceTrace& trace, SegmentMap& segs, MappedRuns& mapped) {
  for (std::size_t i = trace.events.size(); i-- > 0;) {
    const TraceEvent& e = trace.events[i];
    if (e.action == Action::kSegmentMap) {
      if (Status st = mapped.removeRange(e.addr, e.size, i); !st.ok()) return st;
    } else if (e.action == Action::kSegmentUnmap) {
      mapped.addRange(e.addr, e.size, e.stream);
    } else if (e.action == Action::kSegmentAlloc) {
      auto it = segs.find(e.addr);
      if (it == segs.end() || it->second.size != e.size)
        return Status::error(
            fmt::format("event {}: segment_alloc at {:#x} ({} bytes) matches no later segment", i, e.addr, e.size));
      segs.erase(it);
    } else if (e.action == Action::kSegmentFree) {
      if (segs.count(e.addr))
        return Status::error(fmt::format("event {}: segment_free at {:#x} overlaps a live segment", i, e.addr));
      StartSegment s;
      s.addr = e.addr;
      s.size = e.size;
      s.stream = e.stream;
      s.is_large = e.size != 2u * 1024 * 1024;  // small-pool segments are 2 MiB, large ones never are
      segs[e.addr] = s;
    }
  }
  return {};
}

StartSegment* containing(SegmentMap& segs, Addr addr) {
  auto it = segs.upper_bound(addr);
  if (it == segs.begin()) return nullptr;
  --it;
  return addr < it->first + it->second.size ? &it->second : nullptr;
}

// A block live at the first event that no segment of that time holds. When a free in the
// window made it (a free of a block the window never allocated), that free is to blame: a free
// of an address never allocated, a double free, or an entry the reader could not classify.
Status notInASegment(const Snapshot& snapshot, const DeviceTrace& trace, const RequestStream& requests, Addr addr,
                     const StartBlock& block) {
  if (block.allocation.valid() && block.allocation.value() < requests.allocations.size()) {
    const Allocation& a = requests.allocations[block.allocation.value()];
    const std::uint32_t event = a.free_requested_event != kNoEvent ? a.free_requested_event : a.free_completed_event;
    std::string unknown;
    const auto& actions = snapshot.anomalies.examples(Anomaly::unknown_action);
    if (!actions.empty())
      unknown = fmt::format(
          "; the trace has {} entr{} with an action this version does not know (e.g. '{}'): one "
          "may have been its allocation",
          snapshot.anomalies.count(Anomaly::unknown_action),
          snapshot.anomalies.count(Anomaly::unknown_action) == 1 ? "y" : "ies", actions.front());
    if (event != kNoEvent && event < trace.events.size())
      return Status::error(fmt::format(
          "event {} ('{}' of {:#x}, {} bytes): frees a block the trace never allocated, and no segment holds "
          "that address before the trace's first event (a double free, a free of an address never allocated, or a "
          "damaged trace){}",
          event, actionName(trace.events[event].action), addr, trace.events[event].size, unknown));
  }
  return Status::error(fmt::format("a block live at the first event ({:#x}) lies in no segment of that time", addr));
}

}  // namespace

Expected<WindowStart> rebuildWindowStart(const Snapshot& snapshot, std::size_t device, const RequestStream& requests) {
  const DeviceTrace& trace = snapshot.devices.at(device);
  SegmentMap segs;
  MappedRuns mapped;
  std::set<Addr> live_at_end_from_window;  // final blocks explained by allocations in the window
  for (const Allocation& a : requests.allocations)
    if (a.liveAtEnd() && !a.beforeWindow()) live_at_end_from_window.insert(a.addr);
  std::vector<std::pair<Addr, StartBlock>> occupied;
  for (const SegmentInfo& s : snapshot.segments) {
    if (s.device != trace.device) continue;
    StartSegment seg;
    seg.addr = s.address;
    seg.size = s.total_size;
    seg.stream = s.stream;
    seg.is_large = s.is_large;
    seg.is_expandable = s.is_expandable;
    seg.pool = s.pool;
    if (s.is_expandable) {
      mapped.addRange(s.address, s.total_size, s.stream);
    } else {
      segs[s.address] = seg;
    }
    for (const BlockInfo& b : snapshot.blocksOf(s)) {
      if (b.state == BlockState::kInactive || live_at_end_from_window.count(b.address)) continue;
      StartBlock sb{b.address, b.size, b.requested_size, true, b.state == BlockState::kActivePendingFree, {}};
      occupied.emplace_back(b.address, sb);
    }
  }
  if (Status st = undoSegmentEvents(trace, segs, mapped); !st.ok()) return st;
  if (!mapped.runs.empty())
    return Status::error(fmt::format(
        "the trace starts mid-run with {} mapped expandable-segment range(s): rebuilding that start state is not "
        "supported (record with a larger max_entries)",
        mapped.runs.size()));
  for (std::uint32_t i = 0; i < requests.allocations.size(); ++i) {
    const Allocation& a = requests.allocations[i];
    if (!a.beforeWindow()) continue;
    StartBlock sb{a.addr, a.size, a.size, false, a.free_requested_event == kNoEvent, AllocationId(i)};
    occupied.emplace_back(a.addr, sb);
  }
  WindowStart out;
  for (auto& [addr, block] : occupied) {
    StartSegment* seg = containing(segs, addr);
    if (!seg) return notInASegment(snapshot, trace, requests, addr, block);
    seg->blocks.push_back(block);
  }
  for (auto& [addr, seg] : segs) {
    std::sort(seg.blocks.begin(), seg.blocks.end(),
              [](const StartBlock& a, const StartBlock& b) { return a.addr < b.addr; });
    out.segments.push_back(std::move(seg));
  }
  out.complete = out.segments.empty();
  return out;
}

}  // namespace reservoir::traces
