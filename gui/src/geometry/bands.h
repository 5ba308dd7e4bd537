// The live blocks as stacked bands (memory_viz's Active Memory Timeline): each pixel column
// shows the blocks alive at one event of its range (the one with the most live bytes, so
// peaks survive any zoom), stacked in allocation order. Blocks too thin to see at the
// current scale are summed per stack: a stack whose small blocks together are tall enough
// gets one band in its colour; the rest are merged into one grey band at the bottom. Every
// byte is accounted for, and the work per frame is bounded by the events in view, not by
// the trace.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "geometry/axis.h"
#include "reservoir/core/compact_series.h"
#include "reservoir/core/strong_id.h"
#include "reservoir/traces/request_stream.h"

namespace reservoir::gui {

inline constexpr std::uint32_t kNoAllocation = 0xffffffffu;

// Allocation lifetimes, read from the trace's request stream: allocation a is live after event e
// when begin(a) <= e < end(a).
struct LifetimeView {
  std::span<const traces::Allocation> allocations;
  std::span<const AllocationId> event_allocation;  // per event; invalid for the others
  std::uint32_t events = 0;                        // the end of the allocations live at the end
  const CompactSeries* live = nullptr;             // sum of live sizes after each event
  // Optional, per event (eventSizeClasses): its allocation's size class and whether it starts
  // or ends a block, so the sweep skips the events that change no band without touching the
  // allocation arrays.
  std::span<const std::uint8_t> event_size_class = {};
  // Optional: per stack id its first allocation (kNoAllocation for a stack no allocation has).
  // With it, small blocks are summed per stack.
  std::span<const std::uint32_t> stack_first = {};

  [[nodiscard]] std::size_t count() const { return allocations.size(); }
  [[nodiscard]] std::uint32_t begin(std::size_t a) const { return allocations[a].windowBegin(); }
  [[nodiscard]] std::uint32_t end(std::size_t a) const { return allocations[a].windowEnd(events); }
  [[nodiscard]] std::uint64_t size(std::size_t a) const { return allocations[a].size; }
  [[nodiscard]] StackId stack(std::size_t a) const { return allocations[a].stack; }
  // Event e's allocation, kNoAllocation for an event of none.
  [[nodiscard]] std::uint32_t allocationAt(std::size_t e) const { return event_allocation[e].value(); }
};
static_assert(kNoAllocation == AllocationId::kInvalid);
// Per stack id, the first allocation with that stack (kNoAllocation for none).
std::vector<std::uint32_t> firstAllocationOfStacks(std::span<const traces::Allocation> allocations, std::size_t stacks);
// Per event: the size class of its allocation (1 + floor(log2(size)), at most 63; 0 for none),
// plus kStartsBlock when the event allocates a block that lives past it and kEndsBlock when it
// ends one allocated before it (events that do neither, e.g. a free request, change no band).
std::vector<std::uint8_t> eventSizeClasses(const LifetimeView& lt);
inline constexpr std::uint8_t kStartsBlock = 0x80, kEndsBlock = 0x40, kSizeClassMask = 0x3f;
inline constexpr std::uint32_t kMergedBand = 0xfffffffeu;
inline constexpr std::uint32_t kMergedBandColour = 0xffd5d8dcu;  // the merged band's grey

struct BandSpan {
  std::int64_t lo = 0, hi = 0;   // bytes from the bottom
  std::uint32_t allocation = 0;  // kMergedBand for the merged small blocks
  // More than 1: the small blocks of one stack summed into one band; `allocation` is that
  // stack's first allocation (it gives the colour and the stack).
  std::uint32_t blocks = 1;
};

struct BandColumns {
  std::vector<std::uint32_t> offsets;  // column c's spans: spans[offsets[c] .. offsets[c+1])
  std::vector<BandSpan> spans;
  std::vector<std::uint32_t> event;  // the event each column shows (ColumnRange::kNone: none)
  std::int64_t threshold = 0;        // blocks smaller than this are merged
  std::int64_t stack_floor = 0;      // blocks smaller than this stay grey, not summed per stack
  [[nodiscard]] std::span<const BandSpan> column(std::size_t c) const {
    return {spans.data() + offsets[c], spans.data() + offsets[c + 1]};
  }
};

// `representative[c]`: the event column c shows (nondecreasing, ColumnRange::kNone for none).
// Blocks of at least `threshold` bytes get bands of their own; smaller ones of at least
// threshold / 4096 (stackFloor) are summed per stack when the view has stacks.
BandColumns computeBands(const LifetimeView& lt, std::span<const std::uint32_t> representative, std::int64_t threshold);
// The same columns handed to `column` one at a time, none kept: at a low threshold over thousands
// of columns they are tens of MB (computeBands holds them for a plot, this is for a scan).
void forEachBandColumn(const LifetimeView& lt, std::span<const std::uint32_t> representative, std::int64_t threshold,
                       const std::function<void(std::span<const BandSpan>)>& column);

std::int64_t stackFloor(std::int64_t threshold);

// Per column the event with the most live bytes (its last event when the range is empty).
struct ColumnEnvelope;
std::vector<std::uint32_t> representativeEvents(std::span<const ColumnEnvelope> live_envelope,
                                                std::span<const ColumnRange> columns);

// The span under byte height `bytes` in column `c` (nullptr if none).
const BandSpan* hitBand(const BandColumns& bands, std::size_t c, std::int64_t bytes);

// Fills an ARGB32 image's pixels (stride in pixels) from the bands: column c at x = c,
// bytes mapped by `y` (pixels from the top). colour(allocation) gives each band's colour.
using BandColour = std::uint32_t (*)(std::uint32_t allocation, const void* context);
void rasterizeBands(const BandColumns& bands, const Axis& y, std::uint32_t* pixels, int width, int height, int stride,
                    BandColour colour, const void* context);

// The colour of palette index `key`, as 0xAARRGGBB: pastel hues a golden angle apart, so that
// nearby indices get clearly different colours.
std::uint32_t paletteColour(std::uint64_t key);
// Each key's palette index in the order keys first appear in `key_of_item` (stacks in the
// order of their first allocation: bands stacked one on another get nearby indices, so
// different colours); keys that never appear come after.
std::vector<std::uint32_t> colourRanks(std::span<const std::uint32_t> key_of_item, std::size_t keys);
// The colours covering the most of the bands (bytes summed over the columns), most first, at
// most `max`, leaving the merged band out: the legend's swatch shows these.
std::vector<std::uint32_t> dominantColours(const BandColumns& bands, BandColour colour, const void* context,
                                           std::size_t max);

}  // namespace reservoir::gui
