// libFuzzer target: the snapshot reader must never crash, hang or trip a sanitizer on any input.
// When an input does read as a snapshot, the writer must write it and the reader must read
// that back to a model of the same shape (a round-trip oracle; a mismatch aborts).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "reservoir/traces/reader.h"
#include "reservoir/traces/writer.h"

namespace {

using reservoir::traces::Snapshot;

// Frames reached from entries, segments and blocks (frame dicts or stacks found anywhere else
// are interned by the reader but are not part of a snapshot, so the writer drops them).
std::uint64_t reachableFrames(const Snapshot& s) {
  std::uint64_t n = 0;
  for (const auto& d : s.devices)
    for (const auto& e : d.events) n += s.stack(e.stack).size() + (s.extra(e).has_frames ? 1u << 20 : 0);
  for (const auto& seg : s.segments) n += s.stack(seg.stack).size();
  for (const auto& b : s.blocks) n += s.stack(b.stack).size();
  return n;
}

bool sameShape(const Snapshot& a, const Snapshot& b) {
  if (a.devices.size() != b.devices.size() || a.segments.size() != b.segments.size() ||
      a.blocks.size() != b.blocks.size() || a.annotations.size() != b.annotations.size() ||
      reachableFrames(a) != reachableFrames(b))
    return false;
  for (std::size_t i = 0; i < a.devices.size(); ++i)
    if (a.devices[i].events.size() != b.devices[i].events.size()) return false;
  return true;
}

void roundTrip(const Snapshot& snap) {
  auto bytes = reservoir::traces::writeSnapshotBytes(snap);
  if (!bytes.ok()) std::abort();  // the writer accepts every model the reader makes
  auto again = reservoir::traces::readSnapshotBytes(*bytes, "round trip");
  if (!again.ok() || !sameShape(snap, *again)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Production limits (the defaults): the fuzzer checks the reader exactly as users run it.
  const reservoir::traces::ReadOptions options;
  auto snapshot = reservoir::traces::readSnapshotBytes(std::span<const std::uint8_t>(data, size), "fuzz", options);
  if (snapshot.ok()) roundTrip(*snapshot);
  return 0;
}
