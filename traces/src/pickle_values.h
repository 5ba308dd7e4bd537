// Values of the pickle machine: scalars inline, containers by generation-checked handle.
// Bulk objects (trace entries, frames, stacks, segments, annotations) are converted into the
// typed model as soon as they are complete, so containers stay few and short-lived.
#pragma once

#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "reservoir/traces/snapshot.h"

namespace reservoir::traces::detail {

enum class VTag : std::uint8_t {
  kNone,
  kBool,
  kInt,     // fits int64
  kUInt64,  // in [2^63, 2^64)
  kBigInt,  // outside the 64-bit range: kept only as "an integer"
  kFloat,
  kStr,        // StringId in bits
  kBytes,      // StringId in bits (bytes are interned like strings)
  kContainer,  // handle in bits, generation in aux
  kFrame,      // FrameId in bits (a converted {filename, line, name} dict)
  kStack,      // StackId in bits (a converted list of frames)
  kConsumed,   // a converted object that can no longer be referenced
  kUnset,      // an empty memo slot
};

struct Value {
  VTag tag = VTag::kNone;
  std::uint32_t aux = 0;
  std::uint64_t bits = 0;

  static Value none() { return {}; }
  static Value boolean(bool b) { return {VTag::kBool, 0, b ? 1u : 0u}; }
  static Value integer(std::int64_t v) { return {VTag::kInt, 0, static_cast<std::uint64_t>(v)}; }
  static Value uint64(std::uint64_t v) { return {VTag::kUInt64, 0, v}; }
  static Value bigint() { return {VTag::kBigInt, 0, 0}; }
  static Value real(double d) {
    std::uint64_t b = 0;
    std::memcpy(&b, &d, sizeof b);
    return {VTag::kFloat, 0, b};
  }
  static Value str(StringId id) { return {VTag::kStr, 0, id.value()}; }
  static Value bytes(StringId id) { return {VTag::kBytes, 0, id.value()}; }
  static Value frame(FrameId id) { return {VTag::kFrame, 0, id.value()}; }
  static Value stack(StackId id) { return {VTag::kStack, 0, id.value()}; }
  static Value consumed() { return {VTag::kConsumed, 0, 0}; }
  static Value container(std::uint32_t handle, std::uint32_t gen) { return {VTag::kContainer, gen, handle}; }

  [[nodiscard]] bool isStr() const { return tag == VTag::kStr; }
  [[nodiscard]] bool isInt() const { return tag == VTag::kInt || tag == VTag::kUInt64; }
  [[nodiscard]] StringId strId() const { return StringId(static_cast<std::uint32_t>(bits)); }
  [[nodiscard]] std::int64_t asInt() const { return static_cast<std::int64_t>(bits); }
  [[nodiscard]] std::uint64_t asUInt() const { return bits; }
  [[nodiscard]] double asFloat() const {
    double d = 0;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  [[nodiscard]] std::uint32_t handle() const { return static_cast<std::uint32_t>(bits); }
};

enum class CKind : std::uint8_t { kDict, kList, kTuple, kSet };

struct Container {
  CKind kind = CKind::kList;
  bool live = false;
  std::uint32_t gen = 0;
  std::vector<std::uint32_t> memo_slots;  // memo entries that refer to this container
  std::vector<Value> items;               // dict: key0, value0, key1, value1, ...
  // Typed payloads of lists whose items were converted on insertion.
  std::vector<TraceEvent> events;
  CompactSeries times;                // the events' time_us (DeviceTrace::times)
  std::vector<std::uint32_t> staged;  // indices of staged segments / annotations
  std::uint32_t frame_items = 0;      // items that are converted frames
  std::uint32_t segment_items = 0;
  std::uint32_t annotation_items = 0;
  std::uint64_t unknown_items = 0;  // anything else inserted
  std::uint64_t scalar_items = 0;   // of those, scalars (None, numbers, strings): counted, not stored
  Value first_scalar;               // the first of them, and its index in the list (for messages)
  std::uint64_t first_scalar_index = 0;
  // References handed out besides the one the container was created with (BINGET, DUP):
  // only a container with extra references can be referred to after it is converted.
  std::uint32_t extra_refs = 0;
};

// Container slots are recycled; a handle whose generation no longer matches is stale.
class ContainerPool {
 public:
  std::uint32_t create(CKind kind) {
    std::uint32_t h;
    if (!free_.empty()) {
      h = free_.back();
      free_.pop_back();
    } else {
      h = static_cast<std::uint32_t>(slots_.size());
      slots_.emplace_back();
    }
    Container& c = slots_[h];
    c.kind = kind;
    c.live = true;
    ++live_;
    return h;
  }
  // Releases a converted container; references still held elsewhere resolve to `replacement`.
  void release(std::uint32_t h, const Value& replacement) {
    Container& c = slots_[h];
    if (c.extra_refs > 0) forward_[(static_cast<std::uint64_t>(h) << 32) | c.gen] = replacement;
    c.extra_refs = 0;
    c.live = false;
    ++c.gen;
    c.memo_slots.clear();
    c.items.clear();
    if (!c.events.empty()) c.events.clear();
    if (!c.times.empty()) c.times.clear();
    if (!c.staged.empty()) c.staged.clear();
    c.frame_items = c.segment_items = c.annotation_items = 0;
    c.unknown_items = c.scalar_items = 0;
    free_.push_back(h);
    --live_;
  }
  // The container `v` refers to, or nullptr if the handle is stale.
  Container* get(const Value& v) {
    if (v.tag != VTag::kContainer || v.handle() >= slots_.size()) return nullptr;
    Container& c = slots_[v.handle()];
    return (c.live && c.gen == v.aux) ? &c : nullptr;
  }
  Value ref(std::uint32_t h) const { return Value::container(h, slots_[h].gen); }
  // `v` itself, or what a converted container it refers to was replaced with.
  Value resolve(const Value& v) const {
    if (v.tag != VTag::kContainer || v.handle() >= slots_.size()) return v;
    const Container& c = slots_[v.handle()];
    if (c.live && c.gen == v.aux) return v;
    const auto it = forward_.find((static_cast<std::uint64_t>(v.handle()) << 32) | v.aux);
    return it == forward_.end() ? v : it->second;
  }
  [[nodiscard]] std::size_t live() const { return live_; }
  // Bytes held by the pool: every slot and what its vectors reserve, except a trace-entry list's
  // reservation from the input's size, counted as it fills (walks the slots, so it is called now
  // and then, not per opcode).
  [[nodiscard]] std::uint64_t memoryBytes() const {
    std::uint64_t n = slots_.capacity() * sizeof(Container) + free_.capacity() * sizeof(std::uint32_t) +
                      forward_.size() * (sizeof(std::uint64_t) + sizeof(Value) + 2 * sizeof(void*));
    for (const Container& c : slots_)
      n += c.memo_slots.capacity() * sizeof(std::uint32_t) + c.items.capacity() * sizeof(Value) +
           c.events.size() * sizeof(TraceEvent) + c.times.memoryBytes() + c.staged.capacity() * sizeof(std::uint32_t);
    return n;
  }

 private:
  std::vector<Container> slots_;
  // Replacements of converted containers that may still be referred to, by (slot, generation).
  std::unordered_map<std::uint64_t, Value> forward_;
  std::vector<std::uint32_t> free_;
  std::size_t live_ = 0;
};

}  // namespace reservoir::traces::detail
