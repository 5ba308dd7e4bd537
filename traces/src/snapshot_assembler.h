// Turns completed pickle objects into the typed Snapshot, recognising them by shape as they
// are inserted into their parents (a trace entry by its 'action' key, a frame by
// filename/line/name, a segment by address/blocks, an annotation by stage), and assembles the
// top-level dict at STOP.
#pragma once

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "pickle_values.h"
#include "reservoir/core/status.h"
#include "reservoir/traces/snapshot.h"
#include "reservoir/traces/stack_interner.h"

namespace reservoir::traces::detail {

// What to do with an object that was converted on insertion.
struct Conversion {
  bool converted = false;
  Value replacement;  // what memo entries (and the parent, if `store`) now hold
  bool store = true;  // keep `replacement` in the parent's items
};

class SnapshotAssembler {
 public:
  explicit SnapshotAssembler(ContainerPool& pool);
  ~SnapshotAssembler();
  SnapshotAssembler(const SnapshotAssembler&) = delete;
  SnapshotAssembler& operator=(const SnapshotAssembler&) = delete;

  StringId intern(std::string_view text) { return snap_.strings.intern(text); }
  [[nodiscard]] std::string_view text(StringId id) const { return snap_.strings.view(id); }
  [[nodiscard]] StringId framesKey() const;
  [[nodiscard]] StringId actionKey() const;
  StackId stackOf(std::span<const FrameId> frames) { return interner_.stack(frames); }

  // `item` is being inserted into `list`. May convert it (the caller then releases it).
  Expected<Conversion> onListInsert(Container& list, const Value& item);
  // `value` is being stored under `key` in a dict. May convert it (a list of frames).
  Expected<Conversion> onDictSet(const Value& key, const Value& value);

  Expected<Snapshot> finish(const Value& root, int protocol);

  // The most distinct entry extras accepted (at most kMaxEventExtras: an entry keeps its id in 24 bits).
  void setMaxExtras(std::uint64_t n) { max_extras_ = std::min<std::uint64_t>(n, kMaxEventExtras); }

  // The hot path for the bulk of a snapshot: is `dict` a trace entry, and convert it into
  // `list` (false: malformed, the general path will report why).
  [[nodiscard]] bool looksLikeEvent(const Container& dict) const;
  bool convertEventFast(Container& list, const Container& dict);
  bool convertEventFast(Container& list, std::span<const Value> items);

  // Bytes held by the model built so far and by the staged segments, blocks and annotations.
  [[nodiscard]] std::uint64_t memoryBytes() const;

  // Short description of a value's type for error messages ("str", "list", ...).
  std::string typeName(const Value& v);
  // typeName for a `frames` value that is not a list of frames: a list says how many items are not.
  std::string framesTypeName(const Value& v);

 private:
  std::uint64_t max_extras_ = kMaxEventExtras;
  [[nodiscard]] bool tooManyExtras() const { return snap_.extras.size() > max_extras_ + 1; }
  struct Keys;
  Expected<Conversion> convertEvent(Container& list, Container& dict);
  Expected<Conversion> convertFrame(Container& dict);
  Expected<Conversion> convertSegment(Container& list, Container& dict);
  Expected<Conversion> convertAnnotation(Container& list, Container& dict);
  Expected<BlockInfo> convertBlock(Container& dict);
  Status assembleSettings(const Value& value);
  Status assembleDeviceTraces(const Value& value);
  Status assembleSegments(const Value& value);
  Status assembleAnnotations(const Value& value);
  void noteUnknownKey(Anomaly anomaly, StringId key);
  // Which key gave a trace entry its address field.
  enum class AddrKey : std::uint8_t { kNone, kAddr, kDeviceFree };
  void noteMissingFields(TraceEvent& ev, AddrKey addr_key, bool has_size);
  // A (int, int) pool id tuple (segment_pool_id, pool_id); false if `v` is not one.
  bool readPoolId(const Value& v, PoolId* out);
  // A stack value, or a list of converted frames interned as one; false if neither.
  bool readStack(const Value& v, StackId* out);
  std::string repr(const Value& v);
  // repr() that also spells out dicts, lists and tuples (FX node info).
  std::string nestedRepr(const Value& v, int depth);

  ContainerPool& pool_;
  Snapshot snap_;
  std::unique_ptr<Keys> keys_;
  StackInterner interner_;
  std::vector<SegmentInfo> staged_segments_;
  std::vector<std::vector<BlockInfo>> staged_blocks_;
  std::vector<Annotation> staged_annotations_;
  std::unordered_map<std::uint64_t, std::uint64_t> unknown_keys_;
  std::vector<FrameId> scratch_frames_;  // (anomaly << 32 | key) -> count
};

}  // namespace reservoir::traces::detail
