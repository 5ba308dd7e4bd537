// The typed snapshot model: what torch.cuda.memory._snapshot() holds, in flat vectors.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reservoir/core/compact_series.h"
#include "reservoir/core/strong_id.h"
#include "reservoir/core/units.h"
#include "reservoir/traces/anomalies.h"
#include "reservoir/traces/event_extra.h"
#include "reservoir/traces/string_table.h"

namespace reservoir::traces {

using reservoir::Addr;
using reservoir::ByteCount;
// The recorded cudaStream_t value (0 = the default stream). Its numeric order is the
// allocator's free-list order, so it is kept as is.
using StreamValue = std::uint64_t;

enum class Action : std::uint8_t {
  kAlloc,
  kFreeRequested,
  kFreeCompleted,
  kSegmentAlloc,
  kSegmentFree,
  kSegmentMap,
  kSegmentUnmap,
  kSnapshot,
  kOom,
  kUserDefined,
  kUnknown,
};
inline constexpr std::size_t kActionCount = static_cast<std::size_t>(Action::kUnknown) + 1;

std::string_view actionName(Action action);
std::optional<Action> parseAction(std::string_view name);

struct Frame {
  StringId filename;
  StringId name;
  std::int64_t line = 0;
  // The FX node fields torch's augment_with_fx_traces adds (fx_node_op, fx_node_name,
  // fx_original_trace, fx_node_info, ...), as "key=value" lines in file order; a value that
  // is not a string is its Python repr. Invalid when the frame has none.
  StringId fx;
  auto operator<=>(const Frame&) const = default;
};

// The "key=value" pairs of Frame::fx, in order.
std::vector<std::pair<std::string_view, std::string_view>> fxFields(std::string_view fx);

// One trace entry: 24 bytes, the rarely varying fields (its stream among them) interned in
// Snapshot::extras (read them with Snapshot::extra, the stream with Snapshot::stream), its time in
// DeviceTrace::times (DeviceTrace::timeOf). For `oom` entries, `addr` holds `device_free`.
struct TraceEvent {
  Addr addr = 0;
  ByteCount size = 0;
  StackId stack;  // empty stack when the entry had no frames
  Action action : 8 = Action::kUnknown;
  // Its EventExtraId (stream, pool, forward frames, compile_context, user_metadata) in the 24 bits
  // beside the action: a snapshot holds at most kMaxEventExtras of them (the reader refuses more).
  std::uint32_t extra_index : 24 = 0;

  [[nodiscard]] std::uint64_t deviceFree() const { return addr; }
  [[nodiscard]] EventExtraId extraId() const { return EventExtraId(extra_index); }
  void setExtraId(EventExtraId id) { extra_index = id.value() & kMaxEventExtras; }
};
static_assert(sizeof(TraceEvent) == 24, "a trace entry is 24 bytes: 20 M of them are most of a read's memory");

enum class BlockState : std::uint8_t { kActiveAllocated, kActivePendingFree, kInactive, kUnknown };
std::string_view blockStateName(BlockState state);
std::optional<BlockState> parseBlockState(std::string_view name);

struct BlockInfo {
  Addr address = 0;
  ByteCount size = 0;
  ByteCount requested_size = 0;
  StackId stack;
  BlockState state = BlockState::kUnknown;
};

struct SegmentInfo {
  std::int64_t device = 0;
  Addr address = 0;
  ByteCount total_size = 0;
  ByteCount allocated_size = 0;
  ByteCount active_size = 0;
  ByteCount requested_size = 0;
  StreamValue stream = 0;
  bool is_large = true;  // segment_type "large" (else "small")
  bool is_expandable = false;
  PoolId pool;
  StackId stack;
  std::uint32_t first_block = 0;  // index into Snapshot::blocks
  std::uint32_t block_count = 0;
  // Where the dict held 'frames' relative to 'blocks' (torch writes either order); kUnknown for
  // segments not read from a file, which the writer orders as torch 2.11 usually does.
  enum class FramesKey : std::uint8_t { kUnknown, kBeforeBlocks, kAfterBlocks };
  FramesKey frames_key = FramesKey::kUnknown;
};

// allocator_settings as recorded (typed fields, plus the raw PYTORCH_CUDA_ALLOC_CONF string).
struct RecordedSettings {
  bool present = false;
  std::string alloc_conf;            // PYTORCH_CUDA_ALLOC_CONF as last parsed
  std::int64_t max_split_size = -1;  // -1 = unlimited
  double garbage_collection_threshold = 0.0;
  bool expandable_segments = false;
  std::optional<bool> release_lock_on_cudamalloc;
  std::optional<bool> graph_capture_record_stream_reuse;
  std::optional<std::int64_t> pinned_num_register_threads;
  std::optional<bool> pinned_use_cuda_host_register;
  // Divisions per power-of-two interval, slot i covering [2^i MiB, 2^(i+1) MiB);
  // recorded as a dict "1","2",...,"32768" (MiB) -> divisions.
  std::array<std::uint64_t, 16> roundup_power2_divisions{};
  // Keys this version does not know, as "key=value" text.
  std::vector<std::pair<std::string, std::string>> other;
};

struct Annotation {
  std::string stage;  // "START" / "END"
  std::string name;
  std::int64_t device = -1;
  std::int64_t time_us = 0;
};

struct DeviceTrace {
  std::int64_t device = 0;
  std::vector<TraceEvent> events;
  // Entry i's time_us, a column beside the entries (a byte or two an entry where 8 were kept in
  // each): entries past its end have none and read 0, as an entry without time_us does.
  CompactSeries times;
  [[nodiscard]] std::int64_t timeOf(std::size_t entry) const { return entry < times.size() ? times[entry] : 0; }
  // Appends an entry and its time (the entries before it without one read 0).
  void push(const TraceEvent& event, std::int64_t time_us) {
    while (times.size() < events.size()) times.push_back(0);
    events.push_back(event);
    times.push_back(time_us);
  }
};

enum class Compression : std::uint8_t { kNone, kGzip, kZstd };
std::string_view compressionName(Compression compression);

struct Snapshot {
  int pickle_protocol = 0;
  Compression compression = Compression::kNone;
  std::uint64_t file_bytes = 0;    // size of the file as stored
  std::uint64_t pickle_bytes = 0;  // size of the (decompressed) pickle stream

  StringTable strings;
  EventExtraTable extras;  // what TraceEvent::extra indexes
  std::vector<Frame> frames;
  // Stack i = stack_frames[stack_offsets[i] .. stack_offsets[i+1]), innermost first.
  std::vector<std::uint32_t> stack_offsets{0};
  std::vector<FrameId> stack_frames;

  std::vector<DeviceTrace> devices;
  std::vector<SegmentInfo> segments;  // sorted by (device, address) as recorded
  std::vector<BlockInfo> blocks;
  RecordedSettings settings;
  std::vector<Annotation> annotations;
  AnomalyCounters anomalies;

  [[nodiscard]] std::span<const FrameId> stack(StackId id) const;
  // The stack of `e` that points and call sites use (its forward frames when it has no own).
  [[nodiscard]] StackId callStack(const TraceEvent& e) const;
  [[nodiscard]] const EventExtra& extra(const TraceEvent& e) const { return extras[e.extraId()]; }
  [[nodiscard]] StreamValue stream(const TraceEvent& e) const { return extra(e).stream; }
  void setStream(TraceEvent& e, StreamValue s) {
    editExtra(e, [s](EventExtra& x) { x.stream = s; });
  }
  // Gives `e` the extra fields `x` (interned; the table holds at most kMaxEventExtras + 1, which
  // the reader checks: other snapshots are made from ones it read).
  void setExtra(TraceEvent& e, const EventExtra& x) { e.setExtraId(extras.intern(x)); }
  // Changes `e`'s extra fields through `edit(EventExtra&)`.
  template <typename Edit>
  void editExtra(TraceEvent& e, Edit&& edit) {
    EventExtra x = extra(e);
    edit(x);
    setExtra(e, x);
  }
  [[nodiscard]] std::size_t stackCount() const { return stack_offsets.size() - 1; }
  [[nodiscard]] std::span<const BlockInfo> blocksOf(const SegmentInfo& segment) const;
  [[nodiscard]] std::string_view str(StringId id) const { return id.valid() ? strings.view(id) : std::string_view{}; }
  // Index into `devices` of the device with the most events (the default device).
  [[nodiscard]] std::size_t busiestDevice() const;
  [[nodiscard]] const DeviceTrace* findDevice(std::int64_t device) const;
};

}  // namespace reservoir::traces
