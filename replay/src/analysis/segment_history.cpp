#include "reservoir/replay/segment_history.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "reservoir/traces/request_stream.h"
#include "reservoir/traces/window_start.h"

namespace reservoir::replay {

std::uint32_t SegmentHistory::segmentAt(std::uint32_t event, Addr addr) const {
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const SegmentSpan& s = segments[i];
    if (s.begin <= event && event < s.end && s.addr <= addr && addr < s.addr + s.size)
      return static_cast<std::uint32_t>(i);
  }
  return BlockSpan::kNoSegment;
}

std::uint32_t SegmentHistory::blockAt(std::uint32_t event, Addr addr) const {
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const BlockSpan& b = blocks[i];
    if (b.begin <= event && event < b.end && b.addr <= addr && addr < b.addr + std::max<ByteCount>(b.size, 1))
      return static_cast<std::uint32_t>(i);
  }
  return kNoBlock;
}

namespace {

// The walk: the spans open now, by address (segments never overlap) and by block address.
class HistoryBuilder {
 public:
  explicit HistoryBuilder(std::size_t events) { h_.events = events; }

  void openSegment(SegmentSpan s) {
    if (s.size == 0) return;
    s.end = static_cast<std::uint32_t>(h_.events);
    open_[s.addr] = static_cast<std::uint32_t>(h_.segments.size());
    h_.segments.push_back(s);
  }
  void closeSegment(Addr addr, std::uint32_t e) {
    const auto it = open_.find(addr);
    if (it == open_.end()) return;  // freed without being known: nothing to close
    h_.segments[it->second].end = e;
    open_.erase(it);
  }
  // Unmaps [addr, addr + size): the mapped ranges it touches end, what of them lies outside
  // goes on from `e`.
  void unmap(Addr addr, ByteCount size, std::uint32_t e) {
    auto it = open_.upper_bound(addr);
    if (it != open_.begin()) --it;
    std::vector<SegmentSpan> rest;
    while (it != open_.end() && it->first < addr + size) {
      SegmentSpan& s = h_.segments[it->second];
      if (s.addr + s.size <= addr) {
        ++it;
        continue;
      }
      s.end = e;
      SegmentSpan left = s, right = s;
      left.begin = right.begin = e;
      left.size = addr > s.addr ? addr - s.addr : 0;
      right.addr = addr + size;
      right.size = s.addr + s.size > addr + size ? s.addr + s.size - (addr + size) : 0;
      rest.push_back(left);
      rest.push_back(right);
      it = open_.erase(it);
    }
    for (const auto& s : rest) openSegment(s);
  }
  void openBlock(Addr addr, ByteCount size, std::uint32_t e, StackId stack) {
    BlockSpan b{addr, size, e, static_cast<std::uint32_t>(h_.events), stack, containing(addr)};
    blocks_open_[addr] = static_cast<std::uint32_t>(h_.blocks.size());
    h_.blocks.push_back(b);
  }
  void closeBlock(Addr addr, std::uint32_t e) {
    const auto it = blocks_open_.find(addr);
    if (it == blocks_open_.end()) return;
    h_.blocks[it->second].end = e;
    blocks_open_.erase(it);
  }
  SegmentHistory take() { return std::move(h_); }

 private:
  std::uint32_t containing(Addr addr) const {
    auto it = open_.upper_bound(addr);
    if (it == open_.begin()) return BlockSpan::kNoSegment;
    --it;
    const SegmentSpan& s = h_.segments[it->second];
    return addr < s.addr + s.size ? it->second : BlockSpan::kNoSegment;
  }
  SegmentHistory h_;
  std::map<Addr, std::uint32_t> open_;
  std::unordered_map<Addr, std::uint32_t> blocks_open_;
};

void openStart(HistoryBuilder& b, const traces::WindowStart& start) {
  for (const traces::StartSegment& s : start.segments) {
    SegmentSpan span{s.addr, s.size, 0, 0, s.stream, s.pool, s.is_expandable};
    if (!s.is_expandable) {
      b.openSegment(span);
    } else {
      for (const auto& [addr, size] : s.mapped) {
        span.addr = addr;
        span.size = size;
        b.openSegment(span);
      }
    }
  }
  for (const traces::StartSegment& s : start.segments)
    for (const traces::StartBlock& k : s.blocks) b.openBlock(k.addr, k.size, 0, StackId{});
}

void walk(HistoryBuilder& b, const traces::Snapshot& snapshot, const traces::DeviceTrace& trace) {
  using traces::Action;
  for (std::size_t i = 0; i < trace.events.size(); ++i) {
    const traces::TraceEvent& ev = trace.events[i];
    const auto e = static_cast<std::uint32_t>(i);
    switch (ev.action) {
      case Action::kSegmentAlloc:
        b.openSegment({ev.addr, ev.size, e, 0, snapshot.stream(ev), snapshot.extra(ev).pool, false});
        break;
      case Action::kSegmentMap:
        b.openSegment({ev.addr, ev.size, e, 0, snapshot.stream(ev), snapshot.extra(ev).pool, true});
        break;
      case Action::kSegmentFree: b.closeSegment(ev.addr, e); break;
      case Action::kSegmentUnmap: b.unmap(ev.addr, ev.size, e); break;
      case Action::kAlloc: b.openBlock(ev.addr, ev.size, e, snapshot.callStack(ev)); break;
      case Action::kFreeCompleted: b.closeBlock(ev.addr, e); break;
      default: break;
    }
  }
}

}  // namespace

Expected<SegmentHistory> segmentHistory(const traces::Snapshot& snapshot, std::size_t device) {
  if (device >= snapshot.devices.size()) return Status::error("no device index " + std::to_string(device));
  const traces::DeviceTrace& trace = snapshot.devices[device];
  auto start = traces::rebuildWindowStart(snapshot, device, traces::buildWindowRequests(trace, snapshot.extras));
  if (!start) return start.status();
  HistoryBuilder b(trace.events.size());
  openStart(b, *start);
  walk(b, snapshot, trace);
  return b.take();
}

}  // namespace reservoir::replay
