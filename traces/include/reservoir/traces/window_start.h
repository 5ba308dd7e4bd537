// The allocator state at a trace's first event, rebuilt from the final segments by walking
// the events backwards (what PyTorch's memory_viz does for its state history). A trace
// recorded with a ring buffer starts mid-run; a complete one starts from an empty allocator.
#pragma once

#include <string>
#include <vector>

#include "reservoir/core/status.h"
#include "reservoir/traces/request_stream.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::traces {

struct StartBlock {
  Addr addr = 0;
  // The block's size. Exact when `size_known` (from the final segments); otherwise the
  // requested bytes, and the replay decides the rounding and any unsplit slack.
  ByteCount size = 0;
  ByteCount requested = 0;
  bool size_known = false;
  bool pending = false;     // freed before the window, waiting for a stream's event
  AllocationId allocation;  // its identity in the request stream (invalid if never freed)
};

struct StartSegment {
  Addr addr = 0;
  ByteCount size = 0;
  StreamValue stream = 0;
  bool is_large = true;
  bool is_expandable = false;
  PoolId pool;
  std::vector<StartBlock> blocks;  // occupied blocks, by address; the rest is free
  // An expandable segment is one address reservation: `addr` is its base (the lowest address
  // the trace shows mapped in it), `size` reaches the end of the highest one, and `mapped`
  // lists the page ranges mapped at the first event (the blocks lie in them).
  std::vector<std::pair<Addr, ByteCount>> mapped;

  // Bytes reserved at the first event (mapped pages for an expandable segment).
  [[nodiscard]] ByteCount reservedBytes() const;
};

struct WindowStart {
  bool complete = true;  // the allocator was empty at the first event
  std::vector<StartSegment> segments;

  // Bytes reserved at the first event: every segment's reservedBytes().
  [[nodiscard]] ByteCount reservedBytes() const;
};

// What the traces layer cannot know about expandable segments: how far one reservation
// reaches (so ranges of one stream split into reservations) and the large pool's page size
// (so a reservation with no final segment is told small from large by its range sizes).
struct WindowOptions {
  ByteCount expandable_reserve = 150109880320ull + 150109880320ull / 8;  // 9/8 of an H200
  ByteCount large_page = 20u * 1024 * 1024;
};

// `device` indexes snapshot.devices; `requests` is buildRequestStream() of that device, or
// buildWindowRequests() (the same start, without the whole stream in memory).
Expected<WindowStart> rebuildWindowStart(const Snapshot& snapshot, std::size_t device, const WindowRequests& requests,
                                         const WindowOptions& options = {});
Expected<WindowStart> rebuildWindowStart(const Snapshot& snapshot, std::size_t device, const RequestStream& requests,
                                         const WindowOptions& options = {});

}  // namespace reservoir::traces
