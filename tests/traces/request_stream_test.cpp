// buildRequestStream against a plain reference (std::unordered_map of live blocks, the
// semantics the request stream had before its address table was made open-addressing):
// random traces with heavy address reuse, so the table probes, erases and grows a lot.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <unordered_map>
#include <vector>

#include "reservoir/traces/request_stream.h"

namespace reservoir::traces {
namespace {

struct Reference {
  std::vector<Allocation> allocations;
  std::vector<Addr> addrs;  // per allocation: the address its first entry names
  std::vector<AllocationId> event_allocation;
  std::size_t before_window = 0;
  std::uint64_t over_live = 0, without_alloc = 0, without_request = 0;
};

Reference reference(const Snapshot& snapshot) {
  const DeviceTrace& trace = snapshot.devices.front();
  Reference r;
  r.event_allocation.assign(trace.events.size(), AllocationId());
  std::unordered_map<Addr, AllocationId> live;
  auto create = [&](const TraceEvent& e) {
    const AllocationId id(static_cast<std::uint32_t>(r.allocations.size()));
    Allocation a;
    a.size = e.size;
    a.stack = e.stack;
    r.allocations.push_back(a);
    r.addrs.push_back(e.addr);
    return id;
  };
  for (std::uint32_t i = 0; i < trace.events.size(); ++i) {
    const TraceEvent& e = trace.events[i];
    if (e.action == Action::kAlloc) {
      if (live.erase(e.addr)) ++r.over_live;
      const AllocationId id = create(e);
      r.allocations[id.value()].alloc_event = i;
      live[e.addr] = id;
      r.event_allocation[i] = id;
    } else if (e.action == Action::kFreeRequested) {
      auto it = live.find(e.addr);
      AllocationId id;
      if (it == live.end() || r.allocations[it->second.value()].free_requested_event != kNoEvent) {
        id = create(e);
        live[e.addr] = id;
        ++r.before_window;
        ++r.without_alloc;
      } else {
        id = it->second;
      }
      r.allocations[id.value()].free_requested_event = i;
      r.event_allocation[i] = id;
    } else if (e.action == Action::kFreeCompleted) {
      auto it = live.find(e.addr);
      AllocationId id;
      if (it == live.end()) {
        id = create(e);
        ++r.before_window;
        ++r.without_alloc;
      } else {
        id = it->second;
        live.erase(it);
      }
      Allocation& a = r.allocations[id.value()];
      if (a.free_requested_event == kNoEvent && !a.beforeWindow()) ++r.without_request;
      a.free_completed_event = i;
      r.event_allocation[i] = id;
    }
  }
  return r;
}

// One device's entries on two streams: held in the snapshot's extras, so the entries carry
// extras ids other than kNoExtra, as a multi-stream recording's do (the stream does not decide
// the requests; an allocation's stream is its alloc entry's).
Snapshot randomTrace(std::uint32_t seed, std::size_t events, std::uint64_t addresses) {
  std::mt19937_64 rng(seed);
  Snapshot s;
  DeviceTrace t;
  const Action actions[] = {Action::kAlloc,         Action::kAlloc,         Action::kFreeRequested,
                            Action::kFreeCompleted, Action::kFreeCompleted, Action::kSegmentAlloc};
  for (std::size_t i = 0; i < events; ++i) {
    TraceEvent e;
    e.action = actions[rng() % std::size(actions)];
    // Addresses 512-aligned in a small range: many reuses, and keys that share hash buckets.
    e.addr = 0x7f0000000000ull + (rng() % addresses) * 512;
    e.size = 512 * (1 + rng() % 64);
    s.setStream(e, rng() % 2);
    t.push(e, static_cast<std::int64_t>(i));
  }
  s.devices.push_back(std::move(t));
  return s;
}

void expectSame(const Snapshot& snapshot) {
  const RequestStream got = buildRequestStream(snapshot.devices.front(), snapshot.extras);
  const Reference want = reference(snapshot);
  ASSERT_EQ(got.allocations.size(), want.allocations.size());
  for (std::size_t i = 0; i < want.allocations.size(); ++i) {
    const Allocation& a = got.allocations[i];
    const Allocation& b = want.allocations[i];
    ASSERT_EQ(allocationAddress(a, snapshot.devices.front()), want.addrs[i]) << "allocation " << i;
    ASSERT_EQ(a.size, b.size) << "allocation " << i;
    ASSERT_EQ(a.alloc_event, b.alloc_event) << "allocation " << i;
    ASSERT_EQ(a.free_requested_event, b.free_requested_event) << "allocation " << i;
    ASSERT_EQ(a.free_completed_event, b.free_completed_event) << "allocation " << i;
  }
  ASSERT_EQ(got.event_allocation.size(), want.event_allocation.size());
  for (std::size_t i = 0; i < want.event_allocation.size(); ++i)
    ASSERT_EQ(got.event_allocation[i], want.event_allocation[i]) << "event " << i;
  EXPECT_EQ(got.before_window, want.before_window);
  EXPECT_EQ(got.anomalies.count(Anomaly::alloc_over_live_block), want.over_live);
  EXPECT_EQ(got.anomalies.count(Anomaly::free_without_alloc), want.without_alloc);
  EXPECT_EQ(got.anomalies.count(Anomaly::free_completed_without_request), want.without_request);
}

TEST(RequestStream, MatchesReferenceWithHeavyAddressReuse) {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) expectSame(randomTrace(seed, 20000, 97));
}

TEST(RequestStream, MatchesReferenceWhileTheTableGrows) {
  // Many distinct live addresses: the table rehashes several times with entries in it.
  for (std::uint32_t seed = 1; seed <= 3; ++seed) expectSame(randomTrace(seed, 200000, 50000));
}

// The window's requests built without the whole stream are those of the whole stream: the
// allocations made before the window (with their ids and events) and the never-freed addresses.
void expectSameWindow(const Snapshot& snapshot) {
  const DeviceTrace& trace = snapshot.devices.front();
  const WindowRequests want = windowRequests(buildRequestStream(trace, snapshot.extras), trace);
  WindowRequests got = buildWindowRequests(trace, snapshot.extras);
  ASSERT_EQ(got.before_window.size(), want.before_window.size());
  for (std::size_t i = 0; i < want.before_window.size(); ++i) {
    const auto& [a_id, a] = got.before_window[i];
    const auto& [b_id, b] = want.before_window[i];
    ASSERT_EQ(a_id, b_id) << "before-window allocation " << i;
    ASSERT_EQ(allocationAddress(a, trace), allocationAddress(b, trace)) << "allocation " << b_id.value();
    ASSERT_EQ(a.size, b.size) << "allocation " << b_id.value();
    ASSERT_EQ(a.free_requested_event, b.free_requested_event) << "allocation " << b_id.value();
    ASSERT_EQ(a.free_completed_event, b.free_completed_event) << "allocation " << b_id.value();
  }
  std::vector<Addr> want_live = want.live_at_end;
  std::sort(want_live.begin(), want_live.end());
  std::sort(got.live_at_end.begin(), got.live_at_end.end());
  EXPECT_EQ(got.live_at_end, want_live);
}

TEST(WindowRequests, MatchTheWholeStreamsWithHeavyAddressReuse) {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) expectSameWindow(randomTrace(seed, 20000, 97));
  // Many live at once: the table of reachable allocations grows while in use.
  for (std::uint32_t seed = 1; seed <= 2; ++seed) expectSameWindow(randomTrace(seed, 200000, 50000));
}

TEST(WindowRequests, ABalancedTraceLeavesNothing) {
  DeviceTrace t;
  for (Action a : {Action::kAlloc, Action::kFreeRequested, Action::kFreeCompleted}) {
    TraceEvent e;
    e.action = a;
    e.addr = 0x1000;
    e.size = 512;
    t.events.push_back(e);
  }
  const WindowRequests w = buildWindowRequests(t, EventExtraTable{});
  EXPECT_TRUE(w.before_window.empty());
  EXPECT_TRUE(w.live_at_end.empty());
  t.events.pop_back();  // never completed: live at the end
  EXPECT_EQ(buildWindowRequests(t, EventExtraTable{}).live_at_end, std::vector<Addr>{0x1000});
}

TEST(RequestStream, EmptyTrace) {
  const RequestStream r = buildRequestStream(DeviceTrace{}, EventExtraTable{});
  EXPECT_TRUE(r.allocations.empty());
  EXPECT_TRUE(r.event_allocation.empty());
}

}  // namespace
}  // namespace reservoir::traces
