#include "reservoir/traces/window_start.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

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
Status undoSegmentEvents(const Snapshot& snapshot, const DeviceTrace& trace, SegmentMap& segs, MappedRuns& mapped) {
  for (std::size_t i = trace.events.size(); i-- > 0;) {
    const TraceEvent& e = trace.events[i];
    if (e.action == Action::kSegmentMap) {
      if (Status st = mapped.removeRange(e.addr, e.size, i); !st.ok()) return st;
    } else if (e.action == Action::kSegmentUnmap) {
      mapped.addRange(e.addr, e.size, snapshot.stream(e));
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
      s.stream = snapshot.stream(e);
      s.is_large = e.size != 2u * 1024 * 1024;  // small-pool segments are 2 MiB, large ones never are
      segs[e.addr] = s;
    }
  }
  return {};
}

// A range the trace shows mapped in an expandable reservation at some time: a final
// segment (which knows its pool and kind), a segment_map or segment_unmap of the window, or
// a run mapped at the first event.
struct Observed {
  Addr addr = 0;
  ByteCount size = 0;
  StreamValue stream = 0;
  std::optional<bool> is_large;
  std::optional<PoolId> pool;
};

struct Reservation {
  Addr base = 0, end = 0;
  StreamValue stream = 0;
  std::optional<bool> is_large;
  std::optional<PoolId> pool;
  bool small_sized = false;  // a range that is not a whole number of large pages
};

// Splits the observed ranges into reservations: per stream, by address, a new one wherever a
// range starts a whole reservation past the current one's base (torch maps a new reservation
// from its base, so the lowest address seen is the base).
std::vector<Reservation> groupReservations(std::vector<Observed> seen, const WindowOptions& opt) {
  std::sort(seen.begin(), seen.end(), [](const Observed& a, const Observed& b) {
    return std::tie(a.stream, a.addr) < std::tie(b.stream, b.addr);
  });
  std::vector<Reservation> out;
  for (const Observed& o : seen) {
    if (out.empty() || out.back().stream != o.stream || o.addr >= out.back().base + opt.expandable_reserve)
      out.push_back(Reservation{o.addr, o.addr, o.stream, std::nullopt, std::nullopt, false});
    Reservation& r = out.back();
    r.end = std::max(r.end, o.addr + o.size);
    if (o.is_large) r.is_large = o.is_large;
    if (o.pool) r.pool = o.pool;
    if (o.size % opt.large_page != 0) r.small_sized = true;
  }
  return out;
}

// The expandable segments at the first event: each reservation with pages mapped then.
Status addExpandableStart(const std::vector<Observed>& seen, const MappedRuns& start_runs, const WindowOptions& opt,
                          SegmentMap& segs) {
  const std::vector<Reservation> groups = groupReservations(seen, opt);
  for (const auto& [start, run] : start_runs.runs) {
    const auto g = std::find_if(groups.begin(), groups.end(), [s = start, stream = run.second](const Reservation& r) {
      return r.stream == stream && s >= r.base && s < r.end;
    });
    if (g == groups.end())
      return Status::error(
          fmt::format("the expandable range mapped at {:#x} at the first event lies in no "
                      "reservation the trace shows",
                      start));
    auto [it, fresh] = segs.try_emplace(g->base);
    StartSegment& seg = it->second;
    if (fresh) {
      seg.addr = g->base;
      seg.size = g->end - g->base;
      seg.stream = g->stream;
      seg.is_large = g->is_large.value_or(!g->small_sized);
      seg.is_expandable = true;
      seg.pool = g->pool.value_or(PoolId{});
    } else if (!seg.is_expandable) {
      return Status::error(fmt::format("the expandable range at {:#x} overlaps a segment at {:#x}", start, seg.addr));
    }
    seg.mapped.emplace_back(start, run.first);
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
Status notInASegment(const Snapshot& snapshot, const DeviceTrace& trace, const WindowRequests& requests, Addr addr,
                     const StartBlock& block) {
  const auto& made = requests.before_window;
  const auto it = std::lower_bound(made.begin(), made.end(), block.allocation,
                                   [](const auto& x, AllocationId id) { return x.first < id; });
  if (block.allocation.valid() && it != made.end() && it->first == block.allocation) {
    const Allocation& a = it->second;
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

ByteCount StartSegment::reservedBytes() const {
  if (!is_expandable) return size;
  ByteCount total = 0;
  for (const auto& page_run : mapped) total += page_run.second;
  return total;
}

ByteCount WindowStart::reservedBytes() const {
  ByteCount total = 0;
  for (const auto& s : segments) total += s.reservedBytes();
  return total;
}

Expected<WindowStart> rebuildWindowStart(const Snapshot& snapshot, std::size_t device, const RequestStream& requests,
                                         const WindowOptions& options) {
  return rebuildWindowStart(snapshot, device, windowRequests(requests, snapshot.devices[device]), options);
}

Expected<WindowStart> rebuildWindowStart(const Snapshot& snapshot, std::size_t device, const WindowRequests& requests,
                                         const WindowOptions& options) {
  const DeviceTrace& trace = snapshot.devices.at(device);
  SegmentMap segs;
  MappedRuns mapped;
  // final blocks explained by allocations in the window
  const std::set<Addr> live_at_end_from_window(requests.live_at_end.begin(), requests.live_at_end.end());
  std::vector<std::pair<Addr, StartBlock>> occupied;
  std::vector<Observed> seen;
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
      seen.push_back(Observed{s.address, s.total_size, s.stream, s.is_large, s.pool});
    } else {
      segs[s.address] = seg;
    }
    for (const BlockInfo& b : snapshot.blocksOf(s)) {
      if (b.state == BlockState::kInactive || live_at_end_from_window.count(b.address)) continue;
      StartBlock sb{b.address, b.size, b.requested_size, true, b.state == BlockState::kActivePendingFree, {}};
      occupied.emplace_back(b.address, sb);
    }
  }
  if (Status st = undoSegmentEvents(snapshot, trace, segs, mapped); !st.ok()) return st;
  if (!mapped.runs.empty()) {
    for (const TraceEvent& e : trace.events)
      if (e.action == Action::kSegmentMap || e.action == Action::kSegmentUnmap)
        seen.push_back(Observed{e.addr, e.size, snapshot.stream(e), std::nullopt, std::nullopt});
    for (const auto& [start, run] : mapped.runs)
      seen.push_back(Observed{start, run.first, run.second, std::nullopt, std::nullopt});
    if (Status st = addExpandableStart(seen, mapped, options, segs); !st.ok()) return st;
  }
  for (const auto& [id, a] : requests.before_window) {
    const Addr addr = allocationAddress(a, trace);
    StartBlock sb{addr, a.size, a.size, false, a.free_requested_event == kNoEvent, id};
    occupied.emplace_back(addr, sb);
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
