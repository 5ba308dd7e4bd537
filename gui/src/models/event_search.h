// Searching the trace: a query of space-separated terms, all of which must hold.
//   0x7f12...        address: events at that address (or a hex prefix of it)
//   size>1MiB        size comparison (>, >=, <, <=, =) with PyTorch-style sizes
//   1.5GiB / 4096    a bare size: that exact size
//   action:alloc     the action (alloc, free_requested, segment_alloc, oom, ...)
//   frame:NAME       a frame whose function or file contains NAME
//   NAME             any other word: the same as frame:NAME
// Pure (no Qt), so that it is tested and benchmarked alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reservoir/core/status.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::gui {

struct EventQuery {
  struct SizeTerm {
    char op = '=';  // '<', '>', '=', 'l' (<=), 'g' (>=)
    std::uint64_t bytes = 0;
  };
  std::vector<std::string> address_prefixes;  // lower-case hex digits, without "0x"
  std::vector<SizeTerm> sizes;
  std::vector<traces::Action> actions;
  std::vector<std::string> frames;  // substrings
  [[nodiscard]] bool empty() const {
    return address_prefixes.empty() && sizes.empty() && actions.empty() && frames.empty();
  }
};

Expected<EventQuery> parseEventQuery(std::string_view text);

// The events of `trace` matching `query`, in order.
std::vector<std::uint32_t> matchEvents(const traces::Snapshot& snap, const traces::DeviceTrace& trace,
                                       const EventQuery& query);

}  // namespace reservoir::gui
