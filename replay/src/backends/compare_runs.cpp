// Comparing two replays of one program: the model's prediction against a GPU backend's run.
// Each run gets its own addresses from its driver, so addresses are compared through the
// pairing of the segments (and expandable reservations) they lie in: the same block must sit
// at the same offset of the corresponding segment.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "reservoir/replay/backend.h"
#include "reservoir/replay/segment_views.h"

namespace reservoir::replay {

using traces::Action;

std::string describeBackendEvent(const BackendEvent& e) {
  if (e.action == Action::kOom) return fmt::format("oom device_free={} size={} stream={}", e.addr, e.size, e.stream);
  return fmt::format("{} addr={:#x} size={} stream={}", traces::actionName(e.action), e.addr, e.size, e.stream);
}

std::vector<BackendEvent> eventsOf(const traces::Snapshot& snapshot, const traces::DeviceTrace& trace) {
  std::vector<BackendEvent> out;
  out.reserve(trace.events.size());
  for (const auto& e : trace.events) out.push_back(BackendEvent{e.action, e.addr, e.size, snapshot.stream(e)});
  return out;
}

std::vector<sim::SegmentView> segmentsOf(const traces::Snapshot& snapshot, std::int64_t device) {
  std::vector<sim::SegmentView> out;
  for (const traces::SegmentInfo& s : snapshot.segments) {
    if (s.device != device) continue;
    out.push_back(segmentView(snapshot, s));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.address < b.address; });
  return out;
}

namespace {

constexpr std::size_t kMaxMismatches = 20;

bool isStateEvent(Action a) { return a != Action::kSnapshot && a != Action::kUserDefined && a != Action::kUnknown; }

// Model address ranges paired with the other run's.
class AddressPairing {
 public:
  struct Range {
    sim::Addr end;
    sim::Addr other;
  };
  [[nodiscard]] const std::pair<const sim::Addr, Range>* find(sim::Addr a) const {
    auto it = ranges_.upper_bound(a);
    if (it == ranges_.begin()) return nullptr;
    --it;
    return a < it->second.end ? &*it : nullptr;
  }
  [[nodiscard]] std::optional<sim::Addr> translate(sim::Addr a) const {
    const auto* r = find(a);
    if (!r) return std::nullopt;
    return r->second.other + (a - r->first);
  }
  void add(sim::Addr begin, sim::ByteCount size, sim::Addr other) {
    sim::Addr end = begin + size;
    auto next = ranges_.upper_bound(begin);
    if (next != ranges_.end()) end = std::min(end, next->first);
    ranges_[begin] = Range{end, other};
  }
  void remove(sim::Addr begin) { ranges_.erase(begin); }

 private:
  std::map<sim::Addr, Range> ranges_;
};

// `free_requested`: whether a free block's requested size is comparable (it is stale, the last
// request of that block, and unknown for blocks older than a ring-buffer trace's window).
std::string segmentText(const sim::SegmentView& s, bool free_requested) {
  std::string t = fmt::format("size={} stream={} {}{}{} allocated={} active={} requested={} blocks=[", s.total_size,
                              s.stream, s.is_large ? "large" : "small", s.is_expandable ? " expandable" : "",
                              s.pool.isDefault() ? "" : fmt::format(" pool=({},{})", s.pool.first, s.pool.second),
                              s.allocated_size, s.active_size, s.requested_size);
  for (std::size_t i = 0; i < s.blocks.size(); ++i) {
    const auto& b = s.blocks[i];
    t += fmt::format("{}+{}:{} {}", i ? " " : "", b.address - s.address, b.size, traces::blockStateName(b.state));
    if (free_requested || b.state != traces::BlockState::kInactive) t += fmt::format(" req={}", b.requested_size);
  }
  return t + "]";
}

void compareEvents(const BackendResult& want, const BackendResult& got, sim::ByteCount total, BackendComparison& c) {
  std::vector<const BackendEvent*> a, b;
  for (const auto& e : want.events)
    if (isStateEvent(e.action)) a.push_back(&e);
  for (const auto& e : got.events)
    if (isStateEvent(e.action)) b.push_back(&e);
  AddressPairing pairing;
  // An expandable reservation is 1.125 x the device's memory (rounded up to pages).
  const sim::ByteCount reservation = total + total / 8 + sim::kDefaultLargeSegment;
  for (std::size_t i = 0; i < want.seed_segments.size() && i < got.seed_segments.size(); ++i)
    pairing.add(want.seed_segments[i].first, want.seed_segments[i].second, got.seed_segments[i].first);
  auto differ = [&](std::size_t i, std::string reason) {
    c.first_difference =
        EventDifference{i, i < a.size() ? describeBackendEvent(*a[i]) : "(no more events)",
                        i < b.size() ? describeBackendEvent(*b[i]) : "(no more events)", std::move(reason)};
  };
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const BackendEvent& x = *a[i];
    const BackendEvent& y = *b[i];
    if (x.action != y.action || x.size != y.size || x.stream != y.stream) {
      differ(i, x.action != y.action ? "another action" : x.size != y.size ? "another size" : "another stream");
      return;
    }
    ++c.events_compared;
    switch (x.action) {
      case Action::kSegmentAlloc: pairing.add(x.addr, x.size, y.addr); break;
      case Action::kSegmentFree: {
        const auto t = pairing.translate(x.addr);
        if (t && *t != y.addr) {
          differ(i, "another segment released");
          return;
        }
        pairing.remove(x.addr);
        break;
      }
      case Action::kSegmentMap:
      case Action::kSegmentUnmap: {
        const auto t = pairing.translate(x.addr);
        if (!t && x.action == Action::kSegmentMap) {
          pairing.add(x.addr, reservation, y.addr);  // the first mapping of a new reservation
        } else if (t && *t != y.addr) {
          differ(i, "pages at another offset of the reservation");
          return;
        }
        break;
      }
      case Action::kAlloc:
      case Action::kFreeRequested:
      case Action::kFreeCompleted: {
        const auto t = pairing.translate(x.addr);
        if (t && *t != y.addr) {
          differ(i, "another block (another segment or offset)");
          return;
        }
        if (!t) {
          // Outside every segment made in the run (seeded state): pair it on first sight.
          pairing.add(x.addr, 1, y.addr);
        }
        break;
      }
      default: break;  // oom: device_free differs between devices
    }
  }
  if (a.size() != b.size()) differ(n, fmt::format("{} events against {}", a.size(), b.size()));
}

void compareLayout(const BackendResult& want, const BackendResult& got, BackendComparison& c) {
  std::vector<std::string> a, b;
  const bool free_requested = want.seed_segments.empty() && got.seed_segments.empty();
  for (const auto& s : want.segments) a.push_back(segmentText(s, free_requested));
  for (const auto& s : got.segments) b.push_back(segmentText(s, free_requested));
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  if (a.size() != b.size())
    c.layout_mismatches.push_back(Mismatch{"segment count", std::to_string(a.size()), std::to_string(b.size())});
  std::vector<std::string> only_a, only_b;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only_a));
  std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(only_b));
  for (std::size_t i = 0; i < std::max(only_a.size(), only_b.size()) && c.layout_mismatches.size() < kMaxMismatches;
       ++i)
    c.layout_mismatches.push_back(Mismatch{"segment (as offsets)", i < only_a.size() ? only_a[i] : "(none)",
                                           i < only_b.size() ? only_b[i] : "(none)"});
}

void figure(BackendComparison& c, const std::string& what, std::int64_t want, std::int64_t got) {
  if (want != got) c.figure_mismatches.push_back(Mismatch{what, std::to_string(want), std::to_string(got)});
}

}  // namespace

BackendComparison compareResults(const BackendResult& want, const BackendResult& got, bool all_stats) {
  BackendComparison c;
  if (!want.events.empty() || !got.events.empty()) {
    const sim::ByteCount total = got.memory.total ? got.memory.total : kH200TotalMemory;
    compareEvents(want, got, total, c);
  }
  compareLayout(want, got, c);
  figure(c, "peak reserved", want.peak_reserved.bytes, got.peak_reserved.bytes);
  figure(c, "peak allocated", want.peak_allocated.bytes, got.peak_allocated.bytes);
  figure(c, "final reserved", want.final_reserved, got.final_reserved);
  figure(c, "final allocated", want.final_allocated, got.final_allocated);
  figure(c, "failed mallocs (oom)", static_cast<std::int64_t>(want.ooms), static_cast<std::int64_t>(got.ooms));
  if (want.probes.size() == got.probes.size()) {
    for (std::size_t i = 0; i < want.probes.size(); ++i) {
      figure(c, fmt::format("probe {} reserved", want.probes[i].point), want.probes[i].reserved,
             got.probes[i].reserved);
      figure(c, fmt::format("probe {} allocated", want.probes[i].point), want.probes[i].allocated,
             got.probes[i].allocated);
    }
  } else {
    figure(c, "probes", static_cast<std::int64_t>(want.probes.size()), static_cast<std::int64_t>(got.probes.size()));
  }
  if (want.stats_known && got.stats_known) {
    // Seeded runs (ring-buffer traces) built their start state differently: current values only.
    const auto a = sim::memoryStatsMap(want.final_stats);
    const auto b = sim::memoryStatsMap(got.final_stats);
    for (const auto& [key, value] : a) {
      const auto it = b.find(key);
      if (it == b.end()) continue;
      const bool current = key.size() > 8 && key.compare(key.size() - 8, 8, ".current") == 0;
      if (!all_stats && !current && key != "max_split_size") continue;
      c.stats_compared.push_back(key);
      if (it->second != value)
        c.stats_mismatches.push_back(Mismatch{key, std::to_string(value), std::to_string(it->second)});
    }
  }
  return c;
}

}  // namespace reservoir::replay
