// The request stream a replay needs: every allocation's identity over its lifetime
// (alloc -> free_requested -> free_completed), independent of address reuse.
#pragma once

#include <atomic>

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "reservoir/traces/anomalies.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::traces {

inline constexpr std::uint32_t kNoEvent = std::numeric_limits<std::uint32_t>::max();

// 24 bytes (a 20 M-event trace has millions): its stream is its alloc entry's (Snapshot::stream),
// its address its first entry's (allocationAddress).
struct Allocation {
  ByteCount size = 0;                             // requested bytes
  StackId stack;                                  // allocation stack (empty when unknown)
  std::uint32_t alloc_event = kNoEvent;           // kNoEvent: allocated before the trace window
  std::uint32_t free_requested_event = kNoEvent;  // kNoEvent: not freed in the window
  std::uint32_t free_completed_event = kNoEvent;

  [[nodiscard]] bool beforeWindow() const { return alloc_event == kNoEvent; }
  // Freed with outstanding stream uses (record_stream): completion came later.
  [[nodiscard]] bool deferredFree() const {
    return free_requested_event != kNoEvent && free_completed_event != free_requested_event + 1;
  }
  [[nodiscard]] bool liveAtEnd() const { return free_completed_event == kNoEvent; }
  // Its lifetime in a window of `events` entries, [windowBegin(), windowEnd(events)): from 0 when
  // allocated before the window, to `events` when live at its end.
  [[nodiscard]] std::uint32_t windowBegin() const { return beforeWindow() ? 0 : alloc_event; }
  [[nodiscard]] std::uint32_t windowEnd(std::uint32_t events) const {
    return liveAtEnd() ? events : free_completed_event;
  }
  // Its first entry in the window: the alloc, else (allocated before the window) the free that
  // named it first.
  [[nodiscard]] std::uint32_t firstEvent() const {
    return !beforeWindow()                    ? alloc_event
           : free_requested_event != kNoEvent ? free_requested_event
                                              : free_completed_event;
  }
};

static_assert(sizeof(Allocation) == 24, "an allocation is 24 bytes: one per request of the trace");

// Its address: its first entry's (an allocation keeps its address from alloc to free_completed).
inline Addr allocationAddress(const Allocation& a, const DeviceTrace& trace) {
  return trace.events[a.firstEvent()].addr;
}

struct RequestStream {
  std::vector<Allocation> allocations;
  // Per trace event: the allocation it belongs to (alloc / free_requested / free_completed),
  // invalid for segment events, oom and markers.
  std::vector<AllocationId> event_allocation;
  AnomalyCounters anomalies;
  std::size_t before_window = 0;  // allocations whose alloc is not in the window
  // Actions the recording left out (_record_memory_history(skip_actions=[...]), torch PR
  // #168183), inferred from the trace: see inferSkippedActions.
  std::vector<Action> skipped_actions;
};

// `extras` is the table the trace's entries index (their snapshot's). `cancel`, when set while it
// runs, stops it within 4096 events (the stream is then incomplete: the caller, who set it,
// drops it).
RequestStream buildRequestStream(const DeviceTrace& trace, const EventExtraTable& extras,
                                 const std::atomic<bool>* cancel = nullptr);

// What the window's start state needs of the request stream (rebuildWindowStart): the
// allocations made before the window, with their ids in the stream, and the addresses of those
// made in it and never freed.
struct WindowRequests {
  std::vector<std::pair<AllocationId, Allocation>> before_window;  // by id
  std::vector<Addr> live_at_end;
};

// The same as windowRequests(buildRequestStream(trace, extras)), built without keeping every
// allocation: its memory is the live blocks', not the trace's.
WindowRequests buildWindowRequests(const DeviceTrace& trace, const EventExtraTable& extras);
WindowRequests windowRequests(const RequestStream& requests, const DeviceTrace& trace);

// The actions a trace was recorded without, inferred from what is missing: an action with no
// entry while the entries that must pair with it are there (free_completed without any
// free_requested, frees without any alloc, segment_free without any segment_alloc, ...).
// The snapshot does not record skip_actions itself.
std::vector<Action> inferSkippedActions(const DeviceTrace& trace);

}  // namespace reservoir::traces
