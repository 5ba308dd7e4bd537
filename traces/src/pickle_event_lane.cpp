// The event lane: a specialised decoder for the one shape that makes up almost all of a
// snapshot's bytes, a trace entry dict appended to a device trace list. It reads the dict
// straight from the input buffer into a TraceEvent, with no stack traffic. It commits only
// when the whole dict had the expected shape; otherwise it undoes its memo entries and the
// general machine decodes the same bytes (so errors and odd input keep their exact
// messages and offsets).
#include <array>
#include <cstring>

#include "pickle_machine.h"
#include "pickle_opcodes.h"

namespace reservoir::traces::detail {

// A cursor over the buffered bytes; every read is bounds-checked and a failed one makes the
// lane give up.
class LaneCursor {
 public:
  LaneCursor(const std::uint8_t* p, const std::uint8_t* end) : p_(p), end_(end) {}
  [[nodiscard]] bool has(std::size_t n) const { return static_cast<std::size_t>(end_ - p_) >= n; }
  [[nodiscard]] std::uint8_t peek() const { return *p_; }
  [[nodiscard]] const std::uint8_t* at() const { return p_; }
  void skip(std::size_t n) { p_ += n; }
  [[nodiscard]] std::uint32_t u32(std::size_t off) const {
    std::uint32_t v;
    std::memcpy(&v, p_ + off, 4);
    return v;  // little-endian hosts only (checked in CMake)
  }
  [[nodiscard]] std::uint16_t u16(std::size_t off) const {
    std::uint16_t v;
    std::memcpy(&v, p_ + off, 2);
    return v;
  }

 private:
  const std::uint8_t* p_;
  const std::uint8_t* end_;
};

namespace {

using Cursor = LaneCursor;

// Skips FRAME opcodes (protocol 4 puts one every 64 KiB).
void skipFrames(Cursor& c) {
  while (c.has(9) && c.peek() == kFrame) c.skip(9);
}

}  // namespace

[[gnu::always_inline]] inline bool PickleMachine::laneMemoize(Cursor& c, const Value& v) {
  skipFrames(c);
  if (!c.has(1)) return false;
  const std::uint8_t op = c.peek();
  if (op == kMemoize) {
    c.skip(1);
  } else if (op == kBinPut && c.has(2) && c.at()[1] == memo_.size()) {
    c.skip(2);
  } else if (op == kLongBinPut && c.has(5) && c.u32(1) == memo_.size()) {
    c.skip(5);
  } else {
    return true;  // not memoized
  }
  if (memo_.size() >= options_.limits.max_memo_entries || memo_.size() == memo_.capacity()) return false;
  memo_.push_back(v);
  return true;
}

// A value the lane understands: memo references to strings / stacks / frames / scalars,
// short strings, small ints, None/True/False, and a list of memoized frames (a stack).
[[gnu::always_inline]] inline bool PickleMachine::laneValue(Cursor& c, Value* out) {
  skipFrames(c);
  if (!c.has(16)) return false;
  const std::uint8_t* p = c.at();
  switch (p[0]) {
    case kBinGet:
    case kLongBinGet: {
      const std::uint64_t idx = p[0] == kBinGet ? p[1] : c.u32(1);
      if (idx >= memo_.size()) return false;
      const Value v = memo_[idx];
      if (v.tag != VTag::kStr && v.tag != VTag::kStack && v.tag != VTag::kInt && v.tag != VTag::kNone &&
          v.tag != VTag::kBool)
        return false;
      *out = v;
      c.skip(p[0] == kBinGet ? 2 : 5);
      return true;
    }
    case kShortBinUnicode:
    case kBinUnicode: {
      const bool is_short = p[0] == kShortBinUnicode;
      const std::size_t n = is_short ? p[1] : c.u32(1);
      const std::size_t head = is_short ? 2 : 5;
      if (!c.has(head + n) || n > options_.limits.max_string_bytes) return false;
      const std::string_view text(reinterpret_cast<const char*>(p + head), n);
      // Entries repeat the same short strings ('N/A'): one remembered string saves a lookup.
      if (!lane_last_str_.valid() || text != lane_last_view_) {
        lane_last_str_ = assembler_.intern(text);
        lane_last_view_ = assembler_.text(lane_last_str_);
      }
      *out = Value::str(lane_last_str_);
      c.skip(head + n);
      return laneMemoize(c, *out);
    }
    case kBinInt1:
      *out = Value::integer(p[1]);
      c.skip(2);
      return true;
    case kBinInt2:
      *out = Value::integer(c.u16(1));
      c.skip(3);
      return true;
    case kBinInt:
      *out = Value::integer(static_cast<std::int32_t>(c.u32(1)));
      c.skip(5);
      return true;
    case kLong1: {
      const std::size_t n = p[1];
      if (n < 1 || n > 8) return false;
      std::uint64_t v = 0;
      for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(p[2 + i]) << (8 * i);
      if (n < 8 && (p[1 + n] & 0x80)) v |= ~0ull << (8 * n);
      *out = Value::integer(static_cast<std::int64_t>(v));
      c.skip(2 + n);
      return true;
    }
    case kNone:
      *out = Value::none();
      c.skip(1);
      return true;
    case kNewTrue:
    case kNewFalse:
      *out = Value::boolean(p[0] == kNewTrue);
      c.skip(1);
      return true;
    case kEmptyList: c.skip(1); return laneFrameList(c, out);
    default: return false;
  }
}

// After EMPTY_LIST: [memoize] then nothing, one `ref APPEND`, or `MARK ref... APPENDS`, where
// every ref is a memoized frame. The list becomes a stack, and its memo slot holds it.
bool PickleMachine::laneFrameList(Cursor& c, Value* out) {
  skipFrames(c);
  const std::size_t memo_slot = memo_.size();
  if (!laneMemoize(c, Value::consumed())) return false;
  const bool memoized = memo_.size() > memo_slot;
  auto& frames = lane_frames_;
  std::size_t n = 0;
  auto frameRef = [&](Cursor& cc) {
    skipFrames(cc);
    if (!cc.has(5)) return false;
    const std::uint8_t op = cc.peek();
    if (op != kBinGet && op != kLongBinGet) return false;
    const std::uint64_t idx = op == kBinGet ? cc.at()[1] : cc.u32(1);
    if (idx >= memo_.size() || memo_[idx].tag != VTag::kFrame || n == frames.size()) return false;
    frames[n++] = FrameId(static_cast<std::uint32_t>(memo_[idx].bits));
    cc.skip(op == kBinGet ? 2 : 5);
    return true;
  };
  skipFrames(c);
  if (!c.has(1)) return false;
  if (c.peek() == kMark) {
    c.skip(1);
    for (;;) {
      skipFrames(c);
      if (!c.has(1)) return false;
      if (c.peek() == kAppends) {
        c.skip(1);
        break;
      }
      if (!frameRef(c)) return false;
    }
  } else if (c.peek() == kBinGet || c.peek() == kLongBinGet) {
    if (!frameRef(c)) return false;
    skipFrames(c);
    if (!c.has(1) || c.peek() != kAppend) return false;
    c.skip(1);
  }
  *out = Value::stack(assembler_.stackOf(std::span<const FrameId>(frames.data(), n)));
  if (memoized) memo_[memo_slot] = *out;
  return true;
}

// At EMPTY_DICT (pos_), when the list the previous entry went into is open with nothing
// pending. Returns true when it consumed the whole dict through its SETITEMS.
bool PickleMachine::eventLane() {
  Cursor c(buf_.data() + pos_, buf_.data() + end_);
  Container* list = pool_.get(lane_list_);
  if (!list || list->events.size() >= options_.limits.max_container_items) return false;
  const std::size_t memo_before = memo_.size();
  auto giveUp = [&] {
    memo_.resize(memo_before);
    return false;
  };
  c.skip(1);  // EMPTY_DICT
  if (!laneMemoize(c, Value::consumed())) return giveUp();
  skipFrames(c);
  if (!c.has(1) || c.peek() != kMark) return giveUp();
  c.skip(1);
  auto& pairs = lane_pairs_;
  std::size_t n = 0;
  for (;;) {
    skipFrames(c);
    if (!c.has(1)) return giveUp();
    if (c.peek() == kSetItems) {
      c.skip(1);
      break;
    }
    if (n == pairs.size()) return giveUp();
    // Decoded in place: a Value written field by field and then copied whole would stall
    // on store forwarding.
    Value& key = pairs[n];
    Value& value = pairs[n + 1];
    // Keys are nearly always memo references to the interned key strings.
    const std::uint8_t op = c.peek();
    if ((op == kBinGet || op == kLongBinGet) && c.has(5)) {
      const std::uint64_t idx = op == kBinGet ? c.at()[1] : c.u32(1);
      if (idx >= memo_.size() || memo_[idx].tag != VTag::kStr) return giveUp();
      key = memo_[idx];
      c.skip(op == kBinGet ? 2 : 5);
    } else if (!laneValue(c, &key) || key.tag != VTag::kStr) {
      return giveUp();
    }
    if (!laneValue(c, &value)) return giveUp();
    n += 2;
  }
  if (n == 0 || pairs[0].strId() != assembler_.actionKey()) return giveUp();
  if (!assembler_.convertEventFast(*list, std::span<const Value>(pairs.data(), n))) return giveUp();
  pos_ = static_cast<std::size_t>(c.at() - buf_.data());
  return true;
}

}  // namespace reservoir::traces::detail
