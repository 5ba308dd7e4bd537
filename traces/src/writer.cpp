#include "reservoir/traces/writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>

#include "writer_pickler.h"
#include "writer_settings.h"
#include "writer_sink.h"

namespace reservoir::traces {
namespace {

using detail::Pickler;

constexpr std::uint32_t kNoSlot = std::numeric_limits<std::uint32_t>::max();

// Writes `count` list items with Python's batching: MARK ... APPENDS per 1000, APPEND for one.
template <typename WriteItem>
void appendBatched(Pickler& p, std::size_t count, WriteItem&& write_item) {
  for (std::size_t start = 0; start < count && !p.failed(); start += Pickler::kBatchSize) {
    const std::size_t n = std::min(Pickler::kBatchSize, count - start);
    if (n > 1) p.mark();
    for (std::size_t i = start; i < start + n; ++i) write_item(i);
    p.endListBatch(n);
  }
}

class SnapshotPickler {
 public:
  SnapshotPickler(const Snapshot& snap, Pickler& p)
      : snap_(snap), p_(p), frame_slots_(snap.frames.size(), kNoSlot), stack_slots_(snap.stackCount(), kNoSlot) {}

  Status validate() const;
  void write();

 private:
  void key(std::string_view k) {
    p_.boundary();
    p_.str(k);
  }
  void keyInt(std::string_view k, std::int64_t v) {
    key(k);
    p_.boundary();
    p_.integer(v);
  }
  void keyUInt(std::string_view k, std::uint64_t v) {
    key(k);
    p_.boundary();
    p_.uinteger(v);
  }
  void keyStr(std::string_view k, std::string_view v) {
    key(k);
    p_.boundary();
    p_.str(v);
  }
  // A private pool's id as torch writes it: the tuple (first, second).
  void keyPool(std::string_view k, const PoolId& pool) {
    key(k);
    p_.boundary();
    p_.integer(pool.first);
    p_.boundary();
    p_.integer(pool.second);
    p_.tuple2();
  }
  void frame(FrameId id);
  void frames(StackId id);
  void event(const TraceEvent& e, std::int64_t time_us);
  void deviceTraces();
  void block(const BlockInfo& b);
  void segment(const SegmentInfo& s);
  void segmentFrames(const SegmentInfo& s) {
    key("frames");
    frames(s.stack);
  }
  void annotation(const Annotation& a);

  const Snapshot& snap_;
  Pickler& p_;
  std::vector<std::uint32_t> frame_slots_;  // memo slot of each frame dict once written
  std::vector<std::uint32_t> stack_slots_;  // memo slot of each frame list once written
};

Status SnapshotPickler::validate() const {
  for (const DeviceTrace& d : snap_.devices)
    if (d.device < 0 || d.device > (1 << 20)) return Status::error(fmt::format("device id {} out of range", d.device));
  const std::size_t stacks = snap_.stackCount();
  auto stack_ok = [&](StackId s) { return !s.valid() || s.value() < stacks; };
  for (const DeviceTrace& d : snap_.devices)
    for (const TraceEvent& e : d.events)
      if (!stack_ok(e.stack)) return Status::error("a trace entry refers to a stack the snapshot does not hold");
  for (const SegmentInfo& s : snap_.segments) {
    if (!stack_ok(s.stack) || std::uint64_t{s.first_block} + s.block_count > snap_.blocks.size())
      return Status::error("a segment refers to blocks or a stack the snapshot does not hold");
  }
  for (const BlockInfo& b : snap_.blocks)
    if (!stack_ok(b.stack)) return Status::error("a block refers to a stack the snapshot does not hold");
  for (FrameId f : snap_.stack_frames)
    if (f.value() >= snap_.frames.size()) return Status::error("a stack refers to a frame the snapshot does not hold");
  return {};
}

void SnapshotPickler::frame(FrameId id) {
  p_.boundary();
  if (frame_slots_[id.value()] != kNoSlot) return p_.get(frame_slots_[id.value()]);
  const Frame& f = snap_.frames[id.value()];
  p_.emptyDict();
  frame_slots_[id.value()] = p_.memoize();
  p_.mark();
  keyStr("name", snap_.str(f.name));
  keyStr("filename", snap_.str(f.filename));
  keyInt("line", f.line);
  // FX fields come back as strings (a dict value as its repr text).
  const auto fx =
      f.fx.valid() ? fxFields(snap_.str(f.fx)) : std::vector<std::pair<std::string_view, std::string_view>>{};
  for (const auto& [k, v] : fx) keyStr(k, v);
  p_.endDictBatch(3 + fx.size());
}

void SnapshotPickler::frames(StackId id) {
  p_.boundary();
  const std::span<const FrameId> stack = snap_.stack(id);
  if (stack.empty()) return p_.emptyList();                 // torch makes a new [] each time: nothing to share
  const std::uint32_t index = id.valid() ? id.value() : 0;  // Snapshot::stack() reads invalid as stack 0
  if (stack_slots_[index] != kNoSlot) return p_.get(stack_slots_[index]);
  p_.emptyList();
  stack_slots_[index] = p_.memoize();
  appendBatched(p_, stack.size(), [&](std::size_t i) { frame(stack[i]); });
}

void SnapshotPickler::event(const TraceEvent& e, std::int64_t time_us) {
  p_.boundary();
  p_.emptyDict();
  p_.mark();
  keyStr("action", actionName(e.action));
  keyUInt(e.action == Action::kOom ? "device_free" : "addr", e.addr);
  keyUInt("size", e.size);
  const EventExtra& x = snap_.extra(e);
  keyUInt("stream", x.stream);
  keyInt("time_us", time_us);
  if (x.compile_context.valid()) keyStr("compile_context", snap_.str(x.compile_context));
  if (x.user_metadata.valid()) keyStr("user_metadata", snap_.str(x.user_metadata));
  if (x.has_frames) {
    key("frames");
    frames(e.stack);
  }
  if (x.has_forward_frames) {
    key("forward_frames");
    frames(x.forward_stack);
  }
  if (x.has_pool) keyPool("pool_id", x.pool);
  const auto optional = [](bool present) -> std::size_t { return present ? 1 : 0; };
  p_.endDictBatch(5 + optional(x.compile_context.valid()) + optional(x.user_metadata.valid()) + optional(x.has_frames) +
                  optional(x.has_forward_frames) + optional(x.has_pool));
}

void SnapshotPickler::deviceTraces() {
  std::int64_t count = 0;
  for (const DeviceTrace& d : snap_.devices) count = std::max(count, d.device + 1);
  // Device number -> its trace (the first with that number, as findDevice): one pass, not one per device.
  std::vector<const DeviceTrace*> by_device(static_cast<std::size_t>(count), nullptr);
  for (const DeviceTrace& d : snap_.devices)
    if (d.device >= 0 && !by_device[static_cast<std::size_t>(d.device)])
      by_device[static_cast<std::size_t>(d.device)] = &d;
  p_.boundary();
  p_.emptyList();
  appendBatched(p_, static_cast<std::size_t>(count), [&](std::size_t i) {
    const DeviceTrace* trace = by_device[i];
    p_.boundary();
    p_.emptyList();
    if (trace)
      appendBatched(p_, trace->events.size(), [&](std::size_t j) { event(trace->events[j], trace->timeOf(j)); });
  });
}

void SnapshotPickler::block(const BlockInfo& b) {
  p_.boundary();
  p_.emptyDict();
  p_.mark();
  keyUInt("address", b.address);
  keyUInt("size", b.size);
  keyUInt("requested_size", b.requested_size);
  keyStr("state", blockStateName(b.state));
  key("frames");
  frames(b.stack);
  p_.endDictBatch(5);
}

void SnapshotPickler::segment(const SegmentInfo& s) {
  p_.boundary();
  p_.emptyDict();
  p_.mark();
  keyInt("device", s.device);
  keyUInt("address", s.address);
  keyUInt("total_size", s.total_size);
  keyUInt("allocated_size", s.allocated_size);
  keyUInt("active_size", s.active_size);
  keyUInt("requested_size", s.requested_size);
  keyUInt("stream", s.stream);
  keyStr("segment_type", s.is_large ? "large" : "small");
  keyPool("segment_pool_id", s.pool);
  key("is_expandable");
  p_.boundary();
  p_.boolean(s.is_expandable);
  // Keep the order the file had; for segments made here, torch 2.11's usual one: a recorded
  // stack after the blocks (when it symbolises all stacks at the end), an empty one before them.
  const bool frames_last = s.frames_key == SegmentInfo::FramesKey::kUnknown
                               ? !snap_.stack(s.stack).empty()
                               : s.frames_key == SegmentInfo::FramesKey::kAfterBlocks;
  if (!frames_last) segmentFrames(s);
  key("blocks");
  const std::span<const BlockInfo> blocks = snap_.blocksOf(s);
  p_.boundary();
  p_.emptyList();
  appendBatched(p_, blocks.size(), [&](std::size_t i) { block(blocks[i]); });
  if (frames_last) segmentFrames(s);
  p_.endDictBatch(12);
}

void SnapshotPickler::annotation(const Annotation& a) {
  p_.boundary();
  p_.emptyDict();
  p_.mark();
  keyStr("stage", a.stage);
  keyStr("name", a.name);
  keyInt("device", a.device);
  keyInt("time_us", a.time_us);
  p_.endDictBatch(4);
}

void SnapshotPickler::write() {
  p_.boundary();
  p_.emptyDict();
  p_.mark();
  key("segments");
  p_.boundary();
  p_.emptyList();
  appendBatched(p_, snap_.segments.size(), [&](std::size_t i) { segment(snap_.segments[i]); });
  key("device_traces");
  deviceTraces();
  if (snap_.settings.present) {
    key("allocator_settings");
    detail::writeSettings(p_, snap_.settings);
  }
  key("external_annotations");
  p_.boundary();
  p_.emptyList();
  appendBatched(p_, snap_.annotations.size(), [&](std::size_t i) { annotation(snap_.annotations[i]); });
  p_.endDictBatch(snap_.settings.present ? 4 : 3);
}

// Fails every write once `cancel` is set (WriteOptions::cancel).
class CancellableSink final : public detail::ByteSink {
 public:
  CancellableSink(detail::ByteSink* inner, const std::atomic<bool>* cancel) : inner_(inner), cancel_(cancel) {}
  Status write(std::span<const std::uint8_t> bytes) override {
    if (cancel_->load(std::memory_order_relaxed)) return Status::error("cancelled");
    return inner_->write(bytes);
  }
  Status finish() override {
    if (cancel_->load(std::memory_order_relaxed)) return Status::error("cancelled");
    return inner_->finish();
  }

 private:
  detail::ByteSink* inner_;
  const std::atomic<bool>* cancel_;
};

Status writeTo(const Snapshot& snapshot, detail::ByteSink* sink, const WriteOptions& options) {
  if (options.protocol < 2 || options.protocol > 5)
    return Status::error(fmt::format("cannot write pickle protocol {} (snapshots use 2-5)", options.protocol));
  std::optional<CancellableSink> cancellable;
  if (options.cancel) cancellable.emplace(sink, options.cancel);
  detail::ByteSink* out = cancellable ? &*cancellable : sink;
  auto compressor = detail::compressingSink(out, options.compression, options.compression_level);
  Pickler pickler(compressor ? compressor.get() : out, options.protocol);
  SnapshotPickler writer(snapshot, pickler);
  if (Status st = writer.validate(); !st.ok()) return Status::error("cannot write the snapshot: " + st.message());
  writer.write();
  return pickler.end();
}

}  // namespace

Expected<std::vector<std::uint8_t>> writeSnapshotBytes(const Snapshot& snapshot, const WriteOptions& options) {
  std::vector<std::uint8_t> bytes;
  detail::VectorSink sink(&bytes);
  if (Status st = writeTo(snapshot, &sink, options); !st.ok()) return st;
  return bytes;
}

Status writeSnapshotFile(const Snapshot& snapshot, const std::string& path, const WriteOptions& options) {
  return detail::writeFileVia(path, [&](detail::ByteSink* sink) { return writeTo(snapshot, sink, options); });
}

Status writeOutputFile(const std::string& path, std::string_view bytes) {
  return detail::writeFileVia(path, [&](detail::ByteSink* sink) {
    Status st = sink->write({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
    return st.ok() ? sink->finish() : st;
  });
}

}  // namespace reservoir::traces
