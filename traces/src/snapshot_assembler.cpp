#include "snapshot_assembler.h"

#include "reservoir/traces/read_problem.h"

#include "snapshot_validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace reservoir::traces::detail {

struct SnapshotAssembler::Keys {
  explicit Keys(StringTable& t)
      : action(t.intern("action")), addr(t.intern("addr")), size(t.intern("size")), stream(t.intern("stream")),
        time_us(t.intern("time_us")), frames(t.intern("frames")), compile_context(t.intern("compile_context")),
        user_metadata(t.intern("user_metadata")), device_free(t.intern("device_free")), filename(t.intern("filename")),
        line(t.intern("line")), name(t.intern("name")), device(t.intern("device")), address(t.intern("address")),
        total_size(t.intern("total_size")), allocated_size(t.intern("allocated_size")),
        active_size(t.intern("active_size")), requested_size(t.intern("requested_size")),
        segment_type(t.intern("segment_type")), segment_pool_id(t.intern("segment_pool_id")),
        is_expandable(t.intern("is_expandable")), blocks(t.intern("blocks")), state(t.intern("state")),
        stage(t.intern("stage")), segments(t.intern("segments")), device_traces(t.intern("device_traces")),
        allocator_settings(t.intern("allocator_settings")), external_annotations(t.intern("external_annotations")),
        pool_id(t.intern("pool_id")), forward_frames(t.intern("forward_frames")) {
    for (std::size_t i = 0; i < kActionCount; ++i) {
      const auto a = static_cast<Action>(i);
      if (a != Action::kUnknown) action_names[i] = t.intern(actionName(a));
    }
    // The keys and action names are the table's first strings: direct lookup by id.
    const std::pair<StringId, EventField> fields[] = {{action, EventField::kAction},
                                                      {addr, EventField::kAddr},
                                                      {device_free, EventField::kAddr},
                                                      {size, EventField::kSize},
                                                      {stream, EventField::kStream},
                                                      {time_us, EventField::kTime},
                                                      {frames, EventField::kFrames},
                                                      {compile_context, EventField::kCompileContext},
                                                      {user_metadata, EventField::kUserMetadata},
                                                      {pool_id, EventField::kPoolId},
                                                      {forward_frames, EventField::kForwardFrames}};
    for (const auto& [id, field] : fields)
      if (id.value() < kDirect) event_field[id.value()] = field;
    action_by_id.fill(Action::kUnknown);
    for (std::size_t i = 0; i < kActionCount; ++i)
      if (action_names[i].valid() && action_names[i].value() < kDirect)
        action_by_id[action_names[i].value()] = static_cast<Action>(i);
  }
  enum class EventField : std::uint8_t {
    kUnknown,
    kAction,
    kAddr,
    kSize,
    kStream,
    kTime,
    kFrames,
    kCompileContext,
    kUserMetadata,
    kPoolId,
    kForwardFrames
  };
  static constexpr std::size_t kDirect = 128;
  std::array<EventField, kDirect> event_field{};
  std::array<Action, kDirect> action_by_id{};

  [[nodiscard]] EventField fieldOf(StringId id) const {
    if (id.value() < kDirect) return event_field[id.value()];
    if (id == action) return EventField::kAction;  // only if the keys were not interned first
    if (id == addr || id == device_free) return EventField::kAddr;
    if (id == size) return EventField::kSize;
    if (id == stream) return EventField::kStream;
    if (id == time_us) return EventField::kTime;
    if (id == frames) return EventField::kFrames;
    if (id == compile_context) return EventField::kCompileContext;
    if (id == user_metadata) return EventField::kUserMetadata;
    if (id == pool_id) return EventField::kPoolId;
    if (id == forward_frames) return EventField::kForwardFrames;
    return EventField::kUnknown;
  }
  [[nodiscard]] Action fastActionOf(StringId id) const {
    return id.value() < kDirect ? action_by_id[id.value()] : actionOf(id);
  }
  StringId action, addr, size, stream, time_us, frames, compile_context, user_metadata, device_free;
  StringId filename, line, name;
  StringId device, address, total_size, allocated_size, active_size, requested_size, segment_type, segment_pool_id,
      is_expandable, blocks, state, stage;
  StringId segments, device_traces, allocator_settings, external_annotations;
  StringId pool_id, forward_frames;
  std::array<StringId, kActionCount> action_names{};

  [[nodiscard]] Action actionOf(StringId id) const {
    for (std::size_t i = 0; i < kActionCount; ++i)
      if (action_names[i] == id) return static_cast<Action>(i);
    return Action::kUnknown;
  }
};

namespace {

// A good pickle of something that is not torch.cuda.memory._snapshot()'s dict.
Status notASnapshot(std::string detail, std::string_view specific = {}) {
  return readError(ReadProblem::kNotASnapshot, std::move(detail), specific);
}

// The value stored under `key` in a dict's items (the last one wins, as in Python).
const Value* lookup(const Container& dict, StringId key) {
  const auto& items = dict.items;
  for (std::size_t i = items.size(); i >= 2; i -= 2) {
    const Value& k = items[i - 2];
    if (k.tag == VTag::kStr && k.strId() == key) return &items[i - 1];
  }
  return nullptr;
}

bool hasKey(const Container& dict, StringId key) { return lookup(dict, key) != nullptr; }

}  // namespace

SnapshotAssembler::SnapshotAssembler(ContainerPool& pool)
    : pool_(pool), keys_(std::make_unique<Keys>(snap_.strings)), interner_(&snap_) {
  interner_.emptyStack();  // StackId(0) is the empty stack
}

SnapshotAssembler::~SnapshotAssembler() = default;

bool SnapshotAssembler::readStack(const Value& v, StackId* out) {
  if (v.tag == VTag::kStack) {
    *out = StackId(static_cast<std::uint32_t>(v.bits));
    return true;
  }
  // A list of converted frames that no `frames` key turned into a stack on the way in.
  const Container* list = pool_.get(v);
  if (!list || list->kind != CKind::kList || list->unknown_items != 0 || list->frame_items != list->items.size())
    return false;
  scratch_frames_.clear();
  for (const Value& f : list->items) scratch_frames_.emplace_back(static_cast<std::uint32_t>(f.bits));
  *out = interner_.stack(scratch_frames_);
  return true;
}

bool SnapshotAssembler::readPoolId(const Value& v, PoolId* out) {
  const Container* t = pool_.get(v);
  if (!t || t->items.size() != 2 || !t->items[0].isInt() || !t->items[1].isInt()) return false;
  *out = PoolId{t->items[0].asInt(), t->items[1].asInt()};
  return true;
}

StringId SnapshotAssembler::actionKey() const { return keys_->action; }
StringId SnapshotAssembler::framesKey() const { return keys_->frames; }

std::uint64_t SnapshotAssembler::memoryBytes() const {
  std::uint64_t n =
      snap_.strings.memoryBytes() + snap_.frames.capacity() * sizeof(Frame) +
      snap_.stack_offsets.capacity() * sizeof(std::uint32_t) + snap_.stack_frames.capacity() * sizeof(FrameId) +
      staged_segments_.capacity() * sizeof(SegmentInfo) + staged_blocks_.capacity() * sizeof(std::vector<BlockInfo>) +
      staged_annotations_.capacity() * sizeof(Annotation) + unknown_keys_.size() * 32;
  for (const auto& blocks : staged_blocks_) n += blocks.capacity() * sizeof(BlockInfo);
  for (const Annotation& a : staged_annotations_) n += a.stage.capacity() + a.name.capacity();
  return n;
}

std::string SnapshotAssembler::typeName(const Value& v) {
  switch (v.tag) {
    case VTag::kNone: return "None";
    case VTag::kBool: return "bool";
    case VTag::kInt:
    case VTag::kUInt64: return "int";
    case VTag::kBigInt: return "an integer outside the 64-bit range (>= 2^64 or < -2^63)";
    case VTag::kFloat: return "float";
    case VTag::kStr: return "str";
    case VTag::kBytes: return "bytes";
    case VTag::kFrame: return "frame dict";
    case VTag::kStack: return "list of frames";
    case VTag::kConsumed: return "already-converted object";
    case VTag::kUnset: return "undefined";
    case VTag::kContainer: {
      const Container* c = pool_.get(v);
      if (!c) return "stale object reference";
      switch (c->kind) {
        case CKind::kDict: return "dict";
        case CKind::kList: return "list";
        case CKind::kTuple: return "tuple";
        case CKind::kSet: return "set";
      }
    }
  }
  return "value";
}

std::string SnapshotAssembler::framesTypeName(const Value& v) {
  const Container* c = v.tag == VTag::kContainer ? pool_.get(v) : nullptr;
  if (!c || c->kind != CKind::kList) return typeName(v);
  // A list, but not every item a frame (frames=[{}]: "'frames' is list" named no fault).
  const std::uint64_t items = c->frame_items + c->unknown_items;
  return fmt::format("a list of {} item(s), {} of them not a frame dict (a frame has 'filename', 'line' and 'name')",
                     items, c->unknown_items);
}

std::string SnapshotAssembler::repr(const Value& v) {
  switch (v.tag) {
    case VTag::kNone: return "None";
    case VTag::kBool: return v.bits ? "True" : "False";
    case VTag::kInt: return std::to_string(v.asInt());
    case VTag::kUInt64: return std::to_string(v.asUInt());
    case VTag::kFloat: return fmt::format("{}", v.asFloat());
    case VTag::kStr: return fmt::format("'{}'", text(v.strId()));
    default: return "<" + typeName(v) + ">";
  }
}

std::string SnapshotAssembler::nestedRepr(const Value& v, int depth) {
  const Container* c = pool_.get(v);
  if (!c) return repr(v);
  if (depth >= 8) return "...";
  const bool dict = c->kind == CKind::kDict;
  std::string out = dict ? "{" : c->kind == CKind::kTuple ? "(" : "[";
  const std::size_t step = dict ? 2 : 1;
  for (std::size_t i = 0; i + step - 1 < c->items.size(); i += step) {
    if (i) out += ", ";
    out += nestedRepr(c->items[i], depth + 1);
    if (dict) out += ": " + nestedRepr(c->items[i + 1], depth + 1);
  }
  return out + (dict ? "}" : c->kind == CKind::kTuple ? ")" : "]");
}

void SnapshotAssembler::noteUnknownKey(Anomaly anomaly, StringId key) {
  ++unknown_keys_[(static_cast<std::uint64_t>(anomaly) << 32) | key.value()];
}

// ---------------------------------------------------------------- insertion hooks

Expected<Conversion> SnapshotAssembler::onListInsert(Container& list, const Value& item) {
  Container* dict = pool_.get(item);
  if (dict && dict->kind == CKind::kDict) {
    if (hasKey(*dict, keys_->action)) return convertEvent(list, *dict);
    if (hasKey(*dict, keys_->filename) && hasKey(*dict, keys_->line)) {
      auto conv = convertFrame(*dict);
      if (conv) ++list.frame_items;
      return conv;
    }
    if (hasKey(*dict, keys_->blocks) && hasKey(*dict, keys_->address)) return convertSegment(list, *dict);
    if (hasKey(*dict, keys_->stage)) return convertAnnotation(list, *dict);
  }
  if (item.tag == VTag::kFrame) {
    ++list.frame_items;
  } else {
    ++list.unknown_items;
  }
  return Conversion{};
}

Expected<Conversion> SnapshotAssembler::onDictSet(const Value& key, const Value& value) {
  if (key.tag != VTag::kStr || (key.strId() != keys_->frames && key.strId() != keys_->forward_frames))
    return Conversion{};
  Container* list = pool_.get(value);
  if (!list || list->kind != CKind::kList || list->unknown_items != 0 || list->frame_items != list->items.size())
    return Conversion{};
  scratch_frames_.clear();
  for (const Value& f : list->items) scratch_frames_.emplace_back(static_cast<std::uint32_t>(f.bits));
  return Conversion{true, Value::stack(interner_.stack(scratch_frames_)), true};
}

bool SnapshotAssembler::looksLikeEvent(const Container& dict) const {
  if (dict.items.empty()) return false;
  const Value& k0 = dict.items[0];  // torch writes 'action' first
  if (k0.tag == VTag::kStr && k0.strId() == keys_->action) return true;
  return hasKey(dict, keys_->action);
}

bool SnapshotAssembler::convertEventFast(Container& list, const Container& dict) {
  return convertEventFast(list, std::span<const Value>(dict.items.data(), dict.items.size() & ~std::size_t{1}));
}

// Converts key/value pairs into a trace event. Validates everything before it records
// anything (anomalies included), so a `false` leaves no trace and the general path can run.
bool SnapshotAssembler::convertEventFast(Container& list, std::span<const Value> items) {
  using F = Keys::EventField;
  const Keys& k = *keys_;
  TraceEvent ev;
  std::int64_t time_us = 0;
  EventExtra x;
  ev.stack = StackId(0);
  AddrKey addr_key = AddrKey::kNone;
  bool has_size = false;
  std::uint32_t unknown_key_count = 0;
  for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
    const Value& key = items[i];
    const Value& v = items[i + 1];
    if (key.tag != VTag::kStr) return false;
    switch (k.fieldOf(key.strId())) {
      case F::kAction:
        if (!v.isStr()) return false;
        ev.action = k.fastActionOf(v.strId());
        break;
      case F::kAddr:
        if (!v.isInt()) return false;
        ev.addr = v.asUInt();
        addr_key = key.strId() == k.device_free ? AddrKey::kDeviceFree : AddrKey::kAddr;
        break;
      case F::kSize:
        if (!v.isInt()) return false;
        ev.size = v.asUInt();
        has_size = true;
        break;
      case F::kStream:
        if (!v.isInt()) return false;
        x.stream = v.asUInt();
        break;
      case F::kTime:
        if (!v.isInt()) return false;
        time_us = v.asInt();
        break;
      case F::kFrames:
        if (v.tag != VTag::kStack) return false;
        ev.stack = StackId(static_cast<std::uint32_t>(v.bits));
        x.has_frames = true;
        break;
      case F::kCompileContext:
        if (v.isStr()) x.compile_context = v.strId();
        break;
      case F::kUserMetadata:
        if (v.isStr()) x.user_metadata = v.strId();
        break;
      case F::kPoolId:
        if (!readPoolId(v, &x.pool)) return false;
        x.has_pool = true;
        break;
      case F::kForwardFrames:
        if (!readStack(v, &x.forward_stack)) return false;
        x.has_forward_frames = true;
        break;
      case F::kUnknown: ++unknown_key_count; break;
    }
  }
  // Valid: now record what was odd about it.
  if (ev.action == Action::kUnknown) {
    for (std::size_t i = 0; i + 1 < items.size(); i += 2)
      if (items[i].strId() == k.action) snap_.anomalies.add(Anomaly::unknown_action, text(items[i + 1].strId()));
  }
  if (unknown_key_count > 0) {
    for (std::size_t i = 0; i + 1 < items.size(); i += 2)
      if (k.fieldOf(items[i].strId()) == F::kUnknown) noteUnknownKey(Anomaly::unknown_event_key, items[i].strId());
  }
  noteMissingFields(ev, addr_key, has_size);
  snap_.setExtra(ev, x);
  if (tooManyExtras()) return false;  // convertEvent says why
  list.events.push_back(ev);
  list.times.push_back(time_us);
  return true;
}

// A missing size or address is taken as 0. An oom's address field is 'device_free' (torch writes
// no 'addr' there): without it, even with an 'addr', the free memory is unknown (0) and that is
// its own anomaly, since no capacity is taken from it (replay's edited run).
void SnapshotAssembler::noteMissingFields(TraceEvent& ev, AddrKey addr_key, bool has_size) {
  const bool oom = ev.action == Action::kOom;
  if (oom && addr_key != AddrKey::kDeviceFree) {
    ev.addr = 0;
    snap_.anomalies.add(Anomaly::oom_without_device_free);
  }
  if (!has_size || (addr_key == AddrKey::kNone && ev.action != Action::kSnapshot && !oom))
    snap_.anomalies.add(Anomaly::event_missing_field, actionName(ev.action));
}

// ---------------------------------------------------------------- conversions

namespace {

Status fieldType(std::string_view what, std::string_view field, std::string_view expected, std::string got) {
  return Status::error(fmt::format("{} field '{}' is {}, expected {}", what, field, got, expected));
}

}  // namespace

Expected<Conversion> SnapshotAssembler::convertEvent(Container& list, Container& dict) {
  const Keys& k = *keys_;
  TraceEvent ev;
  std::int64_t time_us = 0;
  EventExtra x;
  AddrKey addr_key = AddrKey::kNone;
  bool has_size = false;
  const auto& items = dict.items;
  for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
    const Value& key = items[i];
    const Value& v = items[i + 1];
    if (key.tag != VTag::kStr) return Status::error("trace entry has a non-string key (" + typeName(key) + ")");
    const StringId id = key.strId();
    auto intField = [&](std::uint64_t* out) -> Status {
      if (!v.isInt()) return fieldType("trace entry", text(id), "int", typeName(v));
      *out = v.asUInt();
      return {};
    };
    Status st;
    if (id == k.action) {
      if (!v.isStr()) return fieldType("trace entry", "action", "str", typeName(v));
      ev.action = k.actionOf(v.strId());
      if (ev.action == Action::kUnknown) snap_.anomalies.add(Anomaly::unknown_action, text(v.strId()));
    } else if (id == k.addr || id == k.device_free) {
      st = intField(&ev.addr);
      addr_key = id == k.device_free ? AddrKey::kDeviceFree : AddrKey::kAddr;
    } else if (id == k.size) {
      st = intField(&ev.size);
      has_size = true;
    } else if (id == k.stream) {
      st = intField(&x.stream);
    } else if (id == k.time_us) {
      std::uint64_t t = 0;
      st = intField(&t);
      time_us = static_cast<std::int64_t>(t);
    } else if (id == k.frames) {
      if (v.tag != VTag::kStack) return fieldType("trace entry", "frames", "a list of frame dicts", framesTypeName(v));
      ev.stack = StackId(static_cast<std::uint32_t>(v.bits));
      x.has_frames = true;
    } else if (id == k.compile_context) {
      if (v.isStr()) x.compile_context = v.strId();
    } else if (id == k.user_metadata) {
      if (v.isStr()) x.user_metadata = v.strId();
    } else if (id == k.pool_id) {
      if (!readPoolId(v, &x.pool)) return fieldType("trace entry", "pool_id", "a tuple of two ints", typeName(v));
      x.has_pool = true;
    } else if (id == k.forward_frames) {
      if (!readStack(v, &x.forward_stack))
        return fieldType("trace entry", "forward_frames", "a list of frame dicts", framesTypeName(v));
      x.has_forward_frames = true;
    } else {
      noteUnknownKey(Anomaly::unknown_event_key, id);
    }
    if (!st.ok()) return st;
  }
  if (!ev.stack.valid()) ev.stack = StackId(0);
  noteMissingFields(ev, addr_key, has_size);
  snap_.setExtra(ev, x);
  if (tooManyExtras())
    return Status::error(fmt::format(
        "more than {} distinct combinations of an entry's stream, pool_id, forward_frames, compile_context "
        "and user_metadata (a real trace has a few hundred): too many to keep",
        max_extras_));
  list.events.push_back(ev);
  list.times.push_back(time_us);
  return Conversion{true, Value::consumed(), false};
}

Expected<Conversion> SnapshotAssembler::convertFrame(Container& dict) {
  const Keys& k = *keys_;
  Frame f;
  std::string fx;
  const auto& items = dict.items;
  for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
    const Value& key = items[i];
    const Value& v = items[i + 1];
    if (key.tag != VTag::kStr) return Status::error("frame dict has a non-string key");
    const StringId id = key.strId();
    if (id == k.filename) {
      if (!v.isStr()) return fieldType("frame", "filename", "str", typeName(v));
      f.filename = v.strId();
    } else if (id == k.name) {
      if (!v.isStr()) return fieldType("frame", "name", "str", typeName(v));
      f.name = v.strId();
    } else if (id == k.line) {
      if (!v.isInt()) return fieldType("frame", "line", "int", typeName(v));
      f.line = v.asInt();
    } else if (text(id).starts_with("fx_")) {
      // augment_with_fx_traces: kept (as text), not an unknown key.
      if (!fx.empty()) fx += '\n';
      fx += text(id);
      fx += '=';
      fx += v.isStr() ? std::string(text(v.strId())) : nestedRepr(v, 0);
    } else {
      noteUnknownKey(Anomaly::unknown_frame_key, id);
    }
  }
  if (!fx.empty()) f.fx = intern(fx);
  if (!f.name.valid()) f.name = intern("");
  return Conversion{true, Value::frame(interner_.frame(f)), true};
}

Expected<BlockInfo> SnapshotAssembler::convertBlock(Container& dict) {
  const Keys& k = *keys_;
  BlockInfo b;
  b.stack = StackId(0);
  const auto& items = dict.items;
  for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
    const Value& key = items[i];
    const Value& v = items[i + 1];
    if (key.tag != VTag::kStr) return Status::error("block dict has a non-string key");
    const StringId id = key.strId();
    auto need_int = [&](std::uint64_t* out) -> Status {
      if (!v.isInt()) return fieldType("block", text(id), "int", typeName(v));
      *out = v.asUInt();
      return {};
    };
    Status st;
    if (id == k.address)
      st = need_int(&b.address);
    else if (id == k.size)
      st = need_int(&b.size);
    else if (id == k.requested_size)
      st = need_int(&b.requested_size);
    else if (id == k.state) {
      if (!v.isStr()) return fieldType("block", "state", "str", typeName(v));
      auto s = parseBlockState(text(v.strId()));
      if (!s) snap_.anomalies.add(Anomaly::unknown_block_state, text(v.strId()));
      b.state = s.value_or(BlockState::kUnknown);
    } else if (id == k.frames) {
      if (v.tag == VTag::kStack)
        b.stack = StackId(static_cast<std::uint32_t>(v.bits));
      else
        return fieldType("block", "frames", "a list of frame dicts", framesTypeName(v));
    } else {
      noteUnknownKey(Anomaly::unknown_block_key, id);
    }
    if (!st.ok()) return st;
  }
  return b;
}

Expected<Conversion> SnapshotAssembler::convertSegment(Container& list, Container& dict) {
  const Keys& k = *keys_;
  SegmentInfo s;
  s.stack = StackId(0);
  std::vector<BlockInfo> blocks;
  bool blocks_seen = false;
  const auto& items = dict.items;
  for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
    const Value& key = items[i];
    const Value& v = items[i + 1];
    if (key.tag != VTag::kStr) return Status::error("segment dict has a non-string key");
    const StringId id = key.strId();
    auto need_int = [&](std::uint64_t* out) -> Status {
      if (!v.isInt()) return fieldType("segment", text(id), "int", typeName(v));
      *out = v.asUInt();
      return {};
    };
    Status st;
    std::uint64_t tmp = 0;
    if (id == k.device) {
      st = need_int(&tmp);
      s.device = static_cast<std::int64_t>(tmp);
    } else if (id == k.address)
      st = need_int(&s.address);
    else if (id == k.total_size)
      st = need_int(&s.total_size);
    else if (id == k.allocated_size)
      st = need_int(&s.allocated_size);
    else if (id == k.active_size)
      st = need_int(&s.active_size);
    else if (id == k.requested_size)
      st = need_int(&s.requested_size);
    else if (id == k.stream)
      st = need_int(&s.stream);
    else if (id == k.segment_type) {
      if (!v.isStr()) return fieldType("segment", "segment_type", "str", typeName(v));
      s.is_large = text(v.strId()) != "small";
    } else if (id == k.is_expandable) {
      if (v.tag != VTag::kBool) return fieldType("segment", "is_expandable", "bool", typeName(v));
      s.is_expandable = v.bits != 0;
    } else if (id == k.segment_pool_id) {
      if (!readPoolId(v, &s.pool)) return fieldType("segment", "segment_pool_id", "a tuple of two ints", typeName(v));
    } else if (id == k.frames) {
      if (v.tag != VTag::kStack) return fieldType("segment", "frames", "a list of frame dicts", framesTypeName(v));
      s.stack = StackId(static_cast<std::uint32_t>(v.bits));
      s.frames_key = blocks_seen ? SegmentInfo::FramesKey::kAfterBlocks : SegmentInfo::FramesKey::kBeforeBlocks;
    } else if (id == k.blocks) {
      blocks_seen = true;
      Container* bl = pool_.get(v);
      if (!bl || bl->kind != CKind::kList) return fieldType("segment", "blocks", "list", typeName(v));
      for (const Value& bv : bl->items) {
        Container* bd = pool_.get(bv);
        if (!bd || bd->kind != CKind::kDict)
          return Status::error("segment 'blocks' holds a " + typeName(bv) + ", expected dict");
        auto b = convertBlock(*bd);
        if (!b) return b.status();
        blocks.push_back(*b);
      }
    } else {
      noteUnknownKey(Anomaly::unknown_segment_key, id);
    }
    if (!st.ok()) return st;
  }
  list.staged.push_back(static_cast<std::uint32_t>(staged_segments_.size()));
  ++list.segment_items;
  staged_segments_.push_back(s);
  staged_blocks_.push_back(std::move(blocks));
  return Conversion{true, Value::consumed(), false};
}

Expected<Conversion> SnapshotAssembler::convertAnnotation(Container& list, Container& dict) {
  Annotation a;
  const auto& items = dict.items;
  for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
    const Value& key = items[i];
    const Value& v = items[i + 1];
    if (key.tag != VTag::kStr) continue;
    const std::string_view name = text(key.strId());
    if (name == "stage" && v.isStr())
      a.stage = text(v.strId());
    else if (name == "name" && v.isStr())
      a.name = text(v.strId());
    else if (name == "device" && v.isInt())
      a.device = v.asInt();
    else if (name == "time_us" && v.isInt())
      a.time_us = v.asInt();
  }
  list.staged.push_back(static_cast<std::uint32_t>(staged_annotations_.size()));
  ++list.annotation_items;
  staged_annotations_.push_back(std::move(a));
  return Conversion{true, Value::consumed(), false};
}

// ---------------------------------------------------------------- top level

Status SnapshotAssembler::assembleDeviceTraces(const Value& value) {
  Container* outer = pool_.get(value);
  if (!outer || outer->kind != CKind::kList)
    return notASnapshot("'device_traces' is " + typeName(value) + ", expected a list");
  if (outer->scalar_items > 0)
    return notASnapshot(fmt::format("device_traces[{}] is {}, expected a list", outer->first_scalar_index,
                                    typeName(outer->first_scalar)));
  if (outer->items.size() > kMaxDevices)
    return Status::error(
        fmt::format("'device_traces' lists {} devices, more than the {} any machine has (a damaged or hostile file?)",
                    outer->items.size(), kMaxDevices));
  std::unordered_map<std::uint64_t, std::size_t> seen;  // (slot, generation) -> first device index
  for (std::size_t d = 0; d < outer->items.size(); ++d) {
    const Value& item = outer->items[d];
    Container* inner = pool_.get(item);
    if (!inner || inner->kind != CKind::kList)
      return notASnapshot(fmt::format("device_traces[{}] is {}, expected a list", d, typeName(item)));
    const auto [it, fresh] = seen.emplace((item.bits << 32) | item.aux, d);
    if (!fresh)
      return Status::error(
          fmt::format("device_traces[{}] is the same list object as device_traces[{}] (shared through the pickle "
                      "memo); a snapshot never shares them, so this file was not written by torch",
                      d, it->second));
    if (inner->unknown_items || inner->frame_items || inner->segment_items || inner->annotation_items)
      return notASnapshot(
          fmt::format("device_traces[{}] holds {} item(s) that are not trace entries (dicts with an 'action' key)", d,
                      inner->items.size() + inner->scalar_items + inner->segment_items + inner->annotation_items));
    DeviceTrace trace;
    trace.device = static_cast<std::int64_t>(d);
    trace.events = std::move(inner->events);
    trace.times = std::move(inner->times);
    snap_.devices.push_back(std::move(trace));
  }
  return {};
}

Status SnapshotAssembler::assembleSegments(const Value& value) {
  Container* list = pool_.get(value);
  if (!list || list->kind != CKind::kList)
    return notASnapshot("'segments' is " + typeName(value) + ", expected a list");
  if (list->unknown_items || list->frame_items)
    return notASnapshot("'segments' holds items that are not segment dicts");
  for (std::uint32_t idx : list->staged) {
    SegmentInfo s = staged_segments_[idx];
    s.first_block = static_cast<std::uint32_t>(snap_.blocks.size());
    s.block_count = static_cast<std::uint32_t>(staged_blocks_[idx].size());
    snap_.blocks.insert(snap_.blocks.end(), staged_blocks_[idx].begin(), staged_blocks_[idx].end());
    snap_.segments.push_back(s);
  }
  return {};
}

Status SnapshotAssembler::assembleAnnotations(const Value& value) {
  Container* list = pool_.get(value);
  if (!list || list->kind != CKind::kList)
    return Status::error("'external_annotations' is " + typeName(value) + ", expected a list");
  // The usual case: this list holds every staged annotation, in order; they are taken over whole
  // (61 k on a training trace: no second copy).
  bool whole = snap_.annotations.empty() && list->staged.size() == staged_annotations_.size();
  for (std::size_t i = 0; whole && i < list->staged.size(); ++i) whole = list->staged[i] == i;
  if (whole) {
    snap_.annotations = std::move(staged_annotations_);
    staged_annotations_ = {};
    return {};
  }
  snap_.annotations.reserve(snap_.annotations.size() + list->staged.size());
  for (std::uint32_t idx : list->staged) snap_.annotations.push_back(std::move(staged_annotations_[idx]));
  return {};
}

Status SnapshotAssembler::assembleSettings(const Value& value) {
  Container* dict = pool_.get(value);
  if (!dict || dict->kind != CKind::kDict)
    return Status::error("'allocator_settings' is " + typeName(value) + ", expected a dict");
  RecordedSettings& s = snap_.settings;
  s.present = true;
  const auto& items = dict->items;
  for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
    if (items[i].tag != VTag::kStr) continue;
    const std::string_view key = text(items[i].strId());
    const Value& v = items[i + 1];
    auto as_bool = [&](std::optional<bool>* out) {
      if (v.tag == VTag::kBool) *out = v.bits != 0;
    };
    if (key == "PYTORCH_CUDA_ALLOC_CONF" && v.isStr())
      s.alloc_conf = text(v.strId());
    else if (key == "max_split_size" && v.isInt())
      s.max_split_size = v.asInt();
    else if (key == "garbage_collection_threshold" && (v.tag == VTag::kFloat || v.isInt()))
      s.garbage_collection_threshold = v.tag == VTag::kFloat ? v.asFloat() : static_cast<double>(v.asInt());
    else if (key == "expandable_segments" && v.tag == VTag::kBool)
      s.expandable_segments = v.bits != 0;
    else if (key == "release_lock_on_cudamalloc")
      as_bool(&s.release_lock_on_cudamalloc);
    else if (key == "graph_capture_record_stream_reuse")
      as_bool(&s.graph_capture_record_stream_reuse);
    else if (key == "pinned_use_cuda_host_register")
      as_bool(&s.pinned_use_cuda_host_register);
    else if (key == "pinned_num_register_threads" && v.isInt())
      s.pinned_num_register_threads = v.asInt();
    else if (key == "roundup_power2_divisions") {
      Container* rd = pool_.get(v);
      if (!rd || rd->kind != CKind::kDict) return Status::error("'roundup_power2_divisions' is not a dict");
      for (std::size_t j = 0; j + 1 < rd->items.size(); j += 2) {
        if (!rd->items[j].isStr() || !rd->items[j + 1].isInt()) continue;
        const std::string mib(text(rd->items[j].strId()));
        char* end = nullptr;
        const unsigned long long m = std::strtoull(mib.c_str(), &end, 10);
        if (m == 0 || (m & (m - 1)) != 0 || *end) continue;
        const auto slot = static_cast<std::size_t>(std::log2(static_cast<double>(m)));
        if (slot < s.roundup_power2_divisions.size()) s.roundup_power2_divisions[slot] = rd->items[j + 1].asUInt();
      }
    } else {
      s.other.emplace_back(std::string(key), repr(v));
      snap_.anomalies.add(Anomaly::unknown_settings_key, key);
    }
  }
  return {};
}

Expected<Snapshot> SnapshotAssembler::finish(const Value& root, int protocol) {
  Container* dict = pool_.get(root);
  if (!dict || dict->kind != CKind::kDict) {
    if (dict && dict->kind == CKind::kList && dict->segment_items > 0)
      return notASnapshot(
          "not a _snapshot() dict: found a list of segments (torch.cuda.memory_snapshot()); save "
          "torch.cuda.memory._snapshot() to get the trace",
          "a list of segments without the trace (torch.cuda.memory_snapshot(), not _snapshot())");
    return notASnapshot(
        "the pickled object is " + typeName(root) + ", expected the dict of torch.cuda.memory._snapshot()",
        "a pickle of something else (its object is " + typeName(root) + ")");
  }
  const Keys& k = *keys_;
  const Value* traces = lookup(*dict, k.device_traces);
  const Value* segments = lookup(*dict, k.segments);
  if (!traces || !segments)
    return notASnapshot("the top-level dict has no 'segments' / 'device_traces' key",
                        "a pickle of a dict without 'segments' and 'device_traces'");
  if (Status st = assembleSegments(*segments); !st.ok()) return st;
  if (Status st = assembleDeviceTraces(*traces); !st.ok()) return st;
  if (const Value* s = lookup(*dict, k.allocator_settings)) {
    if (Status st = assembleSettings(*s); !st.ok()) return st;
  }
  if (const Value* a = lookup(*dict, k.external_annotations)) {
    if (Status st = assembleAnnotations(*a); !st.ok()) return st;
  }
  for (std::size_t i = 0; i + 1 < dict->items.size(); i += 2) {
    const Value& key = dict->items[i];
    if (!key.isStr()) continue;
    const StringId id = key.strId();
    if (id != k.device_traces && id != k.segments && id != k.allocator_settings && id != k.external_annotations)
      snap_.anomalies.add(Anomaly::unknown_top_level_key, text(id));
  }
  for (const auto& [code, count] : unknown_keys_) {
    const auto anomaly = static_cast<Anomaly>(code >> 32);
    snap_.anomalies.add(anomaly, text(StringId(static_cast<std::uint32_t>(code))), count);
  }
  for (const DeviceTrace& d : snap_.devices) {
    std::int64_t before = 0;  // the entry before's time
    for (std::size_t i = 0; i < d.events.size(); ++i) {
      const TraceEvent& e = d.events[i];
      if (e.action == Action::kSnapshot) snap_.anomalies.add(Anomaly::snapshot_entries);
      if (e.action == Action::kUserDefined) snap_.anomalies.add(Anomaly::user_defined_entries);
      const std::int64_t t = d.timeOf(i);
      if (i > 0 && t < before)
        snap_.anomalies.add(Anomaly::time_goes_backwards, fmt::format("device {} entry {}", d.device, i));
      before = t;
    }
  }
  snap_.pickle_protocol = protocol;
  return std::move(snap_);
}

}  // namespace reservoir::traces::detail
