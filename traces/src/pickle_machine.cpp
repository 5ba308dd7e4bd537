#include "pickle_machine.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>

#include <sys/mman.h>

#include "huge_pages.h"
#include "pickle_opcodes.h"

namespace reservoir::traces::detail {

namespace {

constexpr std::size_t kBufferSize = 1u << 20;
constexpr std::size_t kFastWindow = 16;
// Bytes kept buffered ahead (but near the end): the event lane decodes a whole entry from them.
constexpr std::size_t kRefillWindow = 4096;

std::uint64_t loadLE(const std::uint8_t* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace

PickleMachine::PickleMachine(ByteSource& source, std::uint64_t stored_size, bool compressed, const ReadOptions& options)
    : source_(source), stored_size_(stored_size), plain_size_(compressed ? 0 : stored_size), options_(options),
      memory_cap_(memoryCapFor(options.limits, stored_size, compressed)), compressed_(compressed),
      buf_(kBufferSize), assembler_(pool_) {
  stack_.reserve(4096);
  // The fast paths check the limit once per opcode (each pushes at most one value).
  stack_limit_ = options.limits.max_stack_values;
  memo_.reserve(1u << 16);
  assembler_.setMaxExtras(options.limits.max_event_extras);
}

Status PickleMachine::failAt(std::uint64_t at, const Status& error) const { return error.at({}, at); }

Status PickleMachine::fail(std::string detail) const { return failAt(op_offset_, Status::error(std::move(detail))); }

Status PickleMachine::fail(ReadProblem problem, std::string detail, std::string_view specific) const {
  return failAt(op_offset_, readError(problem, std::move(detail), specific));
}

Status PickleMachine::fail(const Status& error) const { return failAt(op_offset_, error); }

Status PickleMachine::checkCancel() {
  if (options_.cancel && options_.cancel->load(std::memory_order_relaxed)) return fail(ReadProblem::kCancelled, "");
  if (options_.progress) {
    const std::uint64_t done = source_.storedConsumed();
    if (done >= next_progress_) {
      options_.progress(done, stored_size_);
      next_progress_ = done + std::max<std::uint64_t>(stored_size_ / 1000, 1u << 20);
    }
  }
  return {};
}

bool PickleMachine::fill(std::size_t need) {
  if (end_ - pos_ >= need) return true;
  if (pos_ > 0) {
    std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
    base_ += pos_;
    end_ -= pos_;
    pos_ = 0;
  }
  while (end_ < need && !eof_) {
    if (end_ == buf_.size()) buf_.resize(std::min<std::size_t>(need, buf_.size() * 2));
    auto got = source_.read(std::span<std::uint8_t>(buf_.data() + end_, buf_.size() - end_));
    if (!got || *got == 0) {
      eof_ = true;
      if (!got) read_error_ = got.status();
      break;
    }
    end_ += *got;
  }
  return end_ >= need;
}

Status PickleMachine::truncated(std::uint8_t op, std::size_t need) {
  if (!read_error_.ok()) return fail(read_error_);
  return fail(ReadProblem::kTruncated,
              fmt::format("truncated {} (needs {} bytes, {} left)", opcodeName(op), need, end_ - pos_));
}

Status PickleMachine::push(const Value& v) {
  if (stack_.size() >= options_.limits.max_stack_values)
    return fail(ReadProblem::kTooLarge, fmt::format("pickle stack exceeds {} values (hostile or not a snapshot)",
                                                    options_.limits.max_stack_values));
  stack_.push_back(v);
  return {};
}

Status PickleMachine::popMark(std::size_t* from) {
  if (marks_.empty()) return fail("no MARK before this opcode");
  *from = marks_.back();
  marks_.pop_back();
  return {};
}

// ---------------------------------------------------------------- scalars

Status PickleMachine::pushString(std::uint8_t op, std::size_t len_bytes, bool is_bytes) {
  if (!fill(len_bytes)) return truncated(op, len_bytes);
  std::uint64_t len = loadLE(buf_.data() + pos_, len_bytes);
  if (op == kBinString && (len & 0x80000000u)) return fail("BINSTRING with a negative length");
  if (len > options_.limits.max_string_bytes)
    return fail(ReadProblem::kTooLarge, fmt::format("{} declares {} bytes, over the limit of {}", opcodeName(op), len,
                                                    options_.limits.max_string_bytes));
  // A plain input must hold the whole string (a small shortfall is reported as "truncated"). A
  // compressed one is not checked here: the buffer grows only as decompressed bytes arrive, so a
  // lie ends as "truncated" once the data runs out, within the memory budget.
  if (plain_size_ > 0 && len > plain_size_ + 1024)
    return fail(ReadProblem::kTruncated,
                fmt::format("{} declares {} bytes, more than the input can hold", opcodeName(op), len));
  const std::size_t need = len_bytes + static_cast<std::size_t>(len);
  if (!fill(need)) return truncated(op, need);
  const std::string_view text(reinterpret_cast<const char*>(buf_.data() + pos_ + len_bytes),
                              static_cast<std::size_t>(len));
  pos_ += need;
  const StringId id = assembler_.intern(text);
  return push(is_bytes ? Value::bytes(id) : Value::str(id));
}

Status PickleMachine::pushLong(std::uint8_t op, std::size_t len_bytes) {
  if (!fill(len_bytes)) return truncated(op, len_bytes);
  const std::uint64_t raw = loadLE(buf_.data() + pos_, len_bytes);
  if (len_bytes == 4 && (raw & 0x80000000u)) return fail("LONG4 with a negative length");
  if (raw > options_.limits.max_string_bytes)
    return fail(ReadProblem::kTooLarge, fmt::format("LONG4 declares {} bytes", raw));
  const auto n = static_cast<std::size_t>(raw);
  if (!fill(len_bytes + n)) return truncated(op, len_bytes + n);
  const std::uint8_t* p = buf_.data() + pos_ + len_bytes;
  pos_ += len_bytes + n;
  if (n == 0) return push(Value::integer(0));
  if (n <= 8) {
    std::uint64_t v = loadLE(p, n);
    if (n < 8 && (p[n - 1] & 0x80)) v |= ~0ull << (8 * n);  // sign-extend
    return push(Value::integer(static_cast<std::int64_t>(v)));
  }
  const bool negative = (p[n - 1] & 0x80) != 0;
  bool high_zero = true;
  for (std::size_t i = 8; i < n; ++i) high_zero = high_zero && p[i] == 0;
  if (!negative && high_zero) return push(Value::uint64(loadLE(p, 8)));
  return push(Value::bigint());
}

Status PickleMachine::pushInt(std::uint8_t op, std::size_t width) {
  if (!fill(width)) return truncated(op, width);
  std::uint64_t v = loadLE(buf_.data() + pos_, width);
  pos_ += width;
  if (width == 4) return push(Value::integer(static_cast<std::int32_t>(static_cast<std::uint32_t>(v))));
  return push(Value::integer(static_cast<std::int64_t>(v)));
}

Status PickleMachine::pushBinFloat() {
  if (!fill(8)) return truncated(kBinFloat, 8);
  std::uint64_t be = 0;
  for (int i = 0; i < 8; ++i) be = (be << 8) | buf_[pos_ + static_cast<std::size_t>(i)];
  pos_ += 8;
  double d = 0;
  std::memcpy(&d, &be, sizeof d);
  return push(Value::real(d));
}

// ---------------------------------------------------------------- memo

Status PickleMachine::memoPut(std::uint64_t index) {
  if (stack_.empty()) return fail("memo store with an empty stack");
  if (index >= options_.limits.max_memo_entries)
    return fail(ReadProblem::kTooLarge,
                fmt::format("memo index {} over the limit of {}", index, options_.limits.max_memo_entries));
  if (index >= memo_.size() && !memoMayGrow(index + 1)) return memoGrowthRefused();
  if (index == memo_.size()) {
    memo_.push_back(Value{VTag::kUnset, 0, 0});
  } else if (index > memo_.size()) {
    if (index - memo_.size() > options_.limits.max_memo_gap)
      return fail(ReadProblem::kTooLarge,
                  fmt::format("memo index {} far beyond the memo's {} entries", index, memo_.size()));
    memo_.resize(index + 1, Value{VTag::kUnset, 0, 0});
  }
  // An overwritten slot stays in its old container's list (removing it there cost a scan of the
  // list each time: quadratic for one container stored in many slots and overwritten);
  // replaceMemoSlots skips slots that no longer refer to the container.
  const Value& top = stack_.back();
  memo_[index] = top;
  if (Container* c = pool_.get(top)) c->memo_slots.push_back(static_cast<std::uint32_t>(index));
  return {};
}

void PickleMachine::replaceMemoSlots(const Container& c, const Value& replacement) {
  for (std::uint32_t slot : c.memo_slots)
    if (pool_.get(memo_[slot]) == &c) memo_[slot] = replacement;
}

Status PickleMachine::memoGet(std::uint64_t index) {
  if (index >= memo_.size() || memo_[index].tag == VTag::kUnset)
    return fail(fmt::format("memo reference {} is not defined", index));
  const Value v = pool_.resolve(memo_[index]);
  if (v.tag == VTag::kConsumed)
    return fail(
        fmt::format("memo reference {} points to a trace entry, segment or annotation that is shared; "
                    "a snapshot never shares them",
                    index));
  if (v.tag == VTag::kContainer) {
    Container* c = pool_.get(v);
    if (!c) return fail(fmt::format("memo reference {} is stale", index));
    ++c->extra_refs;
  }
  return push(v);
}

// ---------------------------------------------------------------- containers

Status PickleMachine::applyConversion(const Value& original, const Conversion& conv, Value* stored) {
  Container* c = pool_.get(original);
  if (c) {
    replaceMemoSlots(*c, conv.replacement);
    pool_.release(original.handle(), conv.replacement);
  }
  *stored = conv.replacement;
  return {};
}

// Scalars a list keeps before it only counts them.
constexpr std::size_t kStoredScalarsPerList = 64;

Status PickleMachine::insertIntoList(std::uint32_t list_handle, const Value& raw_item) {
  const Value item = pool_.resolve(raw_item);
  if (item.tag == VTag::kConsumed)
    return fail("a trace entry, segment or annotation is inserted twice (shared objects are not supported)");
  // The reader uses a list's containers (entries, segments, blocks, device lists) and frames;
  // other values (None, numbers, strings) are kept only in short lists (an FX node's args, shown
  // as text) and otherwise only counted, never stored: a list of 2^20 None costs nothing.
  const bool scalar = item.tag != VTag::kContainer && item.tag != VTag::kFrame;
  if (scalar) {
    const Container* list = pool_.get(pool_.ref(list_handle));
    if (list->scalar_items > 0 || list->items.size() >= kStoredScalarsPerList) return countScalar(list_handle, item);
  }
  auto conv = assembler_.onListInsert(*pool_.get(pool_.ref(list_handle)), item);
  if (!conv) return fail(conv.status());
  Value stored = item;
  if (conv->converted) {
    applyConversion(item, *conv, &stored);
    if (!conv->store) return {};
  }
  Container* list = pool_.get(pool_.ref(list_handle));
  if (list->items.size() + list->scalar_items >= options_.limits.max_container_items)
    return fail(ReadProblem::kTooLarge, "list exceeds the item limit");
  if (!scalar && stored.tag != VTag::kContainer && stored.tag != VTag::kFrame) return countScalar(list_handle, stored);
  list->items.push_back(stored);
  return {};
}

Status PickleMachine::countScalar(std::uint32_t list_handle, const Value& item) {
  Container* list = pool_.get(pool_.ref(list_handle));
  if (list->items.size() + list->scalar_items >= options_.limits.max_container_items)
    return fail(ReadProblem::kTooLarge, "list exceeds the item limit");
  ++list->unknown_items;  // as SnapshotAssembler::onListInsert counts them
  if (list->scalar_items++ == 0) {
    list->first_scalar = item;
    list->first_scalar_index = list->items.size();
  }
  return {};
}

Status PickleMachine::setInDict(std::uint32_t dict_handle, const Value& raw_key, const Value& raw_value) {
  const Value key = pool_.resolve(raw_key);
  const Value value = pool_.resolve(raw_value);
  auto conv = assembler_.onDictSet(key, value);
  if (!conv) return fail(conv.status());
  Value stored = value;
  if (conv->converted) applyConversion(value, *conv, &stored);
  Container* dict = pool_.get(pool_.ref(dict_handle));
  if (dict->items.size() >= options_.limits.max_container_items)
    return fail(ReadProblem::kTooLarge, "dict exceeds the item limit");
  dict->items.push_back(key);
  dict->items.push_back(stored);
  return {};
}

Status PickleMachine::makeContainer(CKind kind, std::size_t from) {
  if (pool_.live() >= options_.limits.max_stack_values) return fail(ReadProblem::kTooLarge, "too many live containers");
  const std::uint32_t h = pool_.create(kind);
  const Value ref = pool_.ref(h);
  std::vector<Value> items(stack_.begin() + static_cast<std::ptrdiff_t>(from), stack_.end());
  stack_.resize(from);
  if (kind == CKind::kDict) {
    if (items.size() % 2 != 0) return fail("DICT with an odd number of items");
    for (std::size_t i = 0; i < items.size(); i += 2)
      if (Status st = setInDict(h, items[i], items[i + 1]); !st.ok()) return st;
  } else if (kind == CKind::kList || kind == CKind::kSet) {
    for (const Value& v : items)
      if (Status st = insertIntoList(h, v); !st.ok()) return st;
  } else {
    for (Value& v : items) v = pool_.resolve(v);
    pool_.get(ref)->items = std::move(items);
  }
  return push(ref);
}

Status PickleMachine::setItems(std::size_t from) {
  if (from == 0) return fail("SETITEMS without a dict below the MARK");
  const Value target = stack_[from - 1];
  Container* dict = pool_.get(target);
  if (!dict || dict->kind != CKind::kDict) return fail("SETITEMS target is not a dict");
  if ((stack_.size() - from) % 2 != 0) return fail("SETITEMS with an odd number of items");
  for (std::size_t i = from; i + 1 < stack_.size(); i += 2)
    if (Status st = setInDict(target.handle(), stack_[i], stack_[i + 1]); !st.ok()) return st;
  stack_.resize(from);
  return {};
}

Status PickleMachine::appendItems(std::size_t from) {
  if (from == 0) return fail("APPENDS without a list below the MARK");
  const Value target = stack_[from - 1];
  Container* list = pool_.get(target);
  if (!list || (list->kind != CKind::kList && list->kind != CKind::kSet)) return fail("APPENDS target is not a list");
  for (std::size_t i = from; i < stack_.size(); ++i)
    if (Status st = insertIntoList(target.handle(), stack_[i]); !st.ok()) return st;
  stack_.resize(from);
  return {};
}

// ---------------------------------------------------------------- dispatch

Status PickleMachine::step(std::uint8_t op) {
  std::size_t from = 0;
  switch (op) {
    case kMark:
      if (marks_.size() >= options_.limits.max_marks) return fail(ReadProblem::kTooLarge, "MARKs nested too deeply");
      marks_.push_back(stack_.size());
      return {};
    case kNone: return push(Value::none());
    case kNewTrue: return push(Value::boolean(true));
    case kNewFalse: return push(Value::boolean(false));
    case kBinInt: return pushInt(op, 4);
    case kBinInt1: return pushInt(op, 1);
    case kBinInt2: return pushInt(op, 2);
    case kLong1: return pushLong(op, 1);
    case kLong4: return pushLong(op, 4);
    case kBinFloat: return pushBinFloat();
    case kShortBinUnicode: return pushString(op, 1, false);
    case kBinUnicode: return pushString(op, 4, false);
    case kBinUnicode8: return pushString(op, 8, false);
    case kShortBinString: return pushString(op, 1, false);
    case kBinString: return pushString(op, 4, false);
    case kShortBinBytes: return pushString(op, 1, true);
    case kBinBytes: return pushString(op, 4, true);
    case kBinBytes8:
    case kByteArray8: return pushString(op, 8, true);
    case kEmptyDict: return makeContainer(CKind::kDict, stack_.size());
    case kEmptyList: return makeContainer(CKind::kList, stack_.size());
    case kEmptyTuple: return makeContainer(CKind::kTuple, stack_.size());
    case kEmptySet: return makeContainer(CKind::kSet, stack_.size());
    case kTuple1:
    case kTuple2:
    case kTuple3: {
      const std::size_t n = op == kTuple1 ? 1 : op == kTuple2 ? 2 : 3;
      if (stack_.size() < n || (!marks_.empty() && stack_.size() - n < marks_.back()))
        return fail(fmt::format("{} needs {} values on the stack", opcodeName(op), n));
      return makeContainer(CKind::kTuple, stack_.size() - n);
    }
    case kTuple:
      if (Status st = popMark(&from); !st.ok()) return st;
      return makeContainer(CKind::kTuple, from);
    case kList:
      if (Status st = popMark(&from); !st.ok()) return st;
      return makeContainer(CKind::kList, from);
    case kDict:
      if (Status st = popMark(&from); !st.ok()) return st;
      return makeContainer(CKind::kDict, from);
    case kFrozenSet:
      if (Status st = popMark(&from); !st.ok()) return st;
      return makeContainer(CKind::kSet, from);
    case kSetItems:
      if (Status st = popMark(&from); !st.ok()) return st;
      return setItems(from);
    case kAppends:
    case kAddItems:
      if (Status st = popMark(&from); !st.ok()) return st;
      return appendItems(from);
    case kSetItem: return setItem();
    case kAppend: return append();
    case kMemoize: return memoPut(memo_.size());
    case kBinPut:
    case kLongBinPut:
    case kBinGet:
    case kLongBinGet: return memoAtIndex(op);
    case kPop:
      if (!marks_.empty() && marks_.back() == stack_.size()) {
        marks_.pop_back();
        return {};
      }
      if (stack_.empty()) return fail("POP from an empty stack");
      stack_.pop_back();
      return {};
    case kPopMark:
      if (Status st = popMark(&from); !st.ok()) return st;
      stack_.resize(from);
      return {};
    case kDup:
      if (stack_.empty()) return fail("DUP on an empty stack");
      if (Container* c = pool_.get(stack_.back())) ++c->extra_refs;
      return push(Value(stack_.back()));
    case kFrame:
      if (!fill(8)) return truncated(op, 8);
      pos_ += 8;
      return {};
    case kProto: {
      if (!fill(1)) return truncated(op, 1);
      const int p = buf_[pos_++];
      if (p > 5)
        return fail(ReadProblem::kWrongFileType,
                    fmt::format("unsupported pickle protocol {} (this reader knows 2-5)", p),
                    fmt::format("a pickle of protocol {}, which torch does not write (snapshots use 2-5)", p));
      protocol_ = p;
      return {};
    }
    default: return refuseOpcode(op);
  }
}

// SETITEM: dict[key] = value, the three on top of the stack (above the last MARK).
Status PickleMachine::setItem() {
  const std::size_t floor = marks_.empty() ? 0 : marks_.back();
  if (stack_.size() < floor + 3) return fail("SETITEM needs a dict, a key and a value");
  const Value value = stack_.back();
  const Value key = stack_[stack_.size() - 2];
  const Value target = stack_[stack_.size() - 3];
  Container* dict = pool_.get(target);
  if (!dict || dict->kind != CKind::kDict) return fail("SETITEM target is not a dict");
  stack_.resize(stack_.size() - 2);
  return setInDict(target.handle(), key, value);
}

// APPEND: list.append(item), the two on top of the stack (above the last MARK).
Status PickleMachine::append() {
  const std::size_t floor = marks_.empty() ? 0 : marks_.back();
  if (stack_.size() < floor + 2) return fail("APPEND needs a list and an item");
  const Value item = stack_.back();
  const Value target = stack_[stack_.size() - 2];
  Container* list = pool_.get(target);
  if (!list || list->kind != CKind::kList) return fail("APPEND target is not a list");
  stack_.pop_back();
  return insertIntoList(target.handle(), item);
}

// BINPUT / LONG_BINPUT / BINGET / LONG_BINGET: the memo index that follows (1 or 4 bytes).
Status PickleMachine::memoAtIndex(std::uint8_t op) {
  const std::size_t w = op == kBinPut || op == kBinGet ? 1 : 4;
  if (!fill(w)) return truncated(op, w);
  const std::uint64_t idx = loadLE(buf_.data() + pos_, w);
  pos_ += w;
  return op == kBinPut || op == kLongBinPut ? memoPut(idx) : memoGet(idx);
}

// An opcode step() does not run: code (refused by name), out-of-band buffers, protocol-0 text,
// or none known.
Status PickleMachine::refuseOpcode(std::uint8_t op) {
  if (isCodeOpcode(op)) return refuseCode(op);
  if (op == kNextBuffer || op == kReadonlyBuffer)
    return fail(ReadProblem::kNotASnapshot,
                fmt::format("{}: out-of-band buffers are not supported in a snapshot", opcodeName(op)),
                "a pickle with out-of-band buffers, which a snapshot never has");
  if (isTextOpcode(op))
    return fail(fmt::format("protocol-0 text opcode {} is not supported (snapshots are written with protocol 2-5)",
                            opcodeName(op)));
  return fail(fmt::format("unknown opcode 0x{:02x}", op));
}

// The header: PROTO of protocol 2-5 (or a clear message for what the input is instead).
Status PickleMachine::checkHeader() {
  op_offset_ = 0;
  if (!fill(2)) {
    if (!read_error_.ok()) return fail(read_error_);
    if (end_ == 0) return fail(ReadProblem::kEmptyFile, "empty input: expected a pickle (PROTO opcode 0x80)");
    if (buf_[0] == kProto) return fail(ReadProblem::kTruncated, "input too short for a pickle");
  }
  if (end_ < 2 || buf_[0] != kProto) return badHeader();
  if (buf_[1] < 2 || buf_[1] > 5)
    return fail(ReadProblem::kWrongFileType,
                fmt::format("unsupported pickle protocol {} (this reader knows 2-5)", buf_[1]),
                fmt::format("a pickle of protocol {}, which torch does not write (snapshots use 2-5)", buf_[1]));
  return {};
}

std::uint64_t PickleMachine::memoryInUse() const {
  // The memo and the trace-entry lists count what they hold, not what they reserve: their
  // reservations come from the input's size (eventCapacityHint) and cost address space, not
  // memory, until they are filled.
  return buf_.capacity() + (stack_.capacity() + memo_.size()) * sizeof(Value) +
         marks_.capacity() * sizeof(std::size_t) + pool_.memoryBytes() + assembler_.memoryBytes();
}

// What a refusal by the memory cap advises.
constexpr const char* kCapAdvice =
    "a hostile file, or a real trace larger than the cap allows (set RESERVOIR_MAX_MEMORY, e.g. to 8GiB, to read it)";

Status PickleMachine::checkMemory() {
  const std::uint64_t read = base_ + end_;
  if (read < next_memory_check_) return {};
  next_memory_check_ = read + (1u << 20);
  const ReadLimits& limits = options_.limits;
  const std::uint64_t budget = limits.memory_floor_bytes + limits.memory_per_pickle_byte * read;
  const std::uint64_t used = memoryInUse();
  constexpr double kMiB = 1 << 20;
  if (memory_cap_ != 0 && used > memory_cap_) return overCap(used, read);
  // Nor may the pickle run on past 1.5 times the cap while the reader keeps nearly nothing of it
  // (a real snapshot needs about 1.2 bytes per pickle byte, so it meets the cap first): a small
  // compressed file of MARK, None, POP_MARK repeated decompressed to 8 GB, 24 s of reading; at
  // twice the cap it still took 10.3 s, over the 10 s bar (bench/hostile_inputs.py).
  if (memory_cap_ != 0 && read - read / 3 > memory_cap_) {
    const std::string origin = capOrigin();  // only on the refusal: checkMemory runs often
    return fail(ReadProblem::kTooLarge,
                fmt::format("the pickle runs on past {:.0f} MiB (1.5 times the reader's memory cap of {:.0f} MiB{}{}) "
                            "while the reader keeps only {:.0f} MiB of it: {}",
                            static_cast<double>(read) / kMiB, static_cast<double>(memory_cap_) / kMiB,
                            origin.empty() ? "" : ", ", origin, static_cast<double>(used) / kMiB, kCapAdvice));
  }
  if (used <= budget) return {};
  return fail(
      ReadProblem::kTooLarge,
      fmt::format(
          "the reader needs {:.0f} MiB for the {:.0f} MiB of pickle read so far, over its budget of {:.0f} MiB "
          "({} MiB + {} x the pickle's size): a hostile or damaged file (a real snapshot needs about 2 bytes per "
          "pickle byte)",
          static_cast<double>(used) / kMiB, static_cast<double>(read) / kMiB, static_cast<double>(budget) / kMiB,
          limits.memory_floor_bytes >> 20, limits.memory_per_pickle_byte));
}

// Where the cap came from: a fixed one says nothing more; one that follows the input says how.
std::string PickleMachine::capOrigin() const {
  const ReadLimits& limits = options_.limits;
  if (limits.memory_cap_bytes) return "";
  return fmt::format("{} MiB + {} x the {:.2f} MiB {}file", limits.memory_cap_floor_bytes >> 20,
                     compressed_ ? limits.memory_cap_per_compressed_byte : limits.memory_cap_per_plain_byte,
                     static_cast<double>(stored_size_) / (1 << 20), compressed_ ? "compressed " : "");
}

Status PickleMachine::overCap(std::uint64_t used, std::uint64_t read) {
  constexpr double kMiB = 1 << 20;
  const std::string origin = capOrigin();
  return fail(ReadProblem::kTooLarge,
              fmt::format("the reader needs {:.0f} MiB for the {:.0f} MiB of pickle read so far, over its cap of "
                          "{:.0f} MiB{}: {}",
                          static_cast<double>(used) / kMiB, static_cast<double>(read) / kMiB,
                          static_cast<double>(memory_cap_) / kMiB,
                          origin.empty() ? "" : " (" + origin + ")", kCapAdvice));
}

bool PickleMachine::memoMayGrow(std::uint64_t new_size) const {
  if (memory_cap_ == 0 || new_size <= memo_.capacity()) return true;
  return memoryInUse() + memo_.size() * sizeof(Value) <= memory_cap_;  // the copy, while the old table lives
}

Status PickleMachine::memoGrowthRefused() {
  return overCap(memoryInUse() + memo_.size() * sizeof(Value), base_ + pos_);
}

// Keeps kRefillWindow bytes buffered ahead; checks cancellation and reports progress at
// each refill. Fails at the end of the data (STOP is missing).
Status PickleMachine::refill() {
  if (!eof_) {
    if (Status st = checkCancel(); !st.ok()) return st;
    if (Status st = checkMemory(); !st.ok()) return st;
    fill(kRefillWindow);
  }
  if (pos_ >= end_) {
    op_offset_ = offset();
    if (!read_error_.ok()) return fail(read_error_);
    return fail(ReadProblem::kTruncated, "unexpected end of data before STOP (truncated file?)");
  }
  return {};
}

Expected<Snapshot> PickleMachine::run() {
  if (Status st = checkHeader(); !st.ok()) return st;
  const StringId frames_key = assembler_.framesKey();
  for (;;) {
    if (end_ - pos_ < kRefillWindow)
      if (Status st = refill(); !st.ok()) return st;
    op_offset_ = base_ + pos_;
    const std::uint8_t op = buf_[pos_];
    // Fast paths for the opcodes snapshots are made of; the window guarantees their
    // fixed-size arguments are present. Anything else goes through step().
    if (end_ - pos_ >= kFastWindow && stack_.size() + 2 < stack_limit_ && fastStep(op, frames_key)) continue;
    ++pos_;
    if (op == kStop) break;
    if (Status st = step(op); !st.ok()) return st;
  }
  if (stack_.empty()) return fail("STOP with an empty stack");
  next_memory_check_ = 0;
  if (Status st = checkMemory(); !st.ok()) return st;
  auto snap = assembler_.finish(pool_.resolve(stack_.back()), protocol_);
  if (!snap) return fail(snap.status());
  snap->pickle_bytes = offset();
  return snap;
}

// The opcodes that make up nearly all of a snapshot, decoded without step()'s checks where
// the caller's window (kFastWindow bytes buffered, room on the stack) makes them
// unnecessary. Returns false (touching nothing) when the general path must run.
bool PickleMachine::fastStep(std::uint8_t op, StringId frames_key) {
  const std::uint8_t* p = buf_.data() + pos_;
  switch (op) {
    case kBinGet:
    case kLongBinGet: {
      const std::uint64_t idx = op == kBinGet ? p[1] : loadLE(p + 1, 4);
      if (idx < memo_.size()) {
        const Value v = memo_[idx];
        Container* c = v.tag == VTag::kContainer ? pool_.get(v) : nullptr;
        if (c) ++c->extra_refs;
        if (v.tag == VTag::kStr || c || v.tag == VTag::kStack || v.tag == VTag::kFrame) {
          stack_.push_back(v);
          pos_ += op == kBinGet ? 2 : 5;
          return true;
        }
      }
      break;
    }
    case kMark:
      if (marks_.size() < options_.limits.max_marks) {
        marks_.push_back(stack_.size());
        ++pos_;
        return true;
      }
      break;
    case kBinInt1:
      stack_.push_back(Value::integer(p[1]));
      pos_ += 2;
      return true;
    case kBinInt2:
      stack_.push_back(Value::integer(static_cast<std::int64_t>(loadLE(p + 1, 2))));
      pos_ += 3;
      return true;
    case kBinInt:
      stack_.push_back(Value::integer(static_cast<std::int32_t>(static_cast<std::uint32_t>(loadLE(p + 1, 4)))));
      pos_ += 5;
      return true;
    case kLong1: {
      const std::size_t n = p[1];
      if (n >= 1 && n <= 8) {
        std::uint64_t v = loadLE(p + 2, n);
        if (n < 8 && (p[1 + n] & 0x80)) v |= ~0ull << (8 * n);
        stack_.push_back(Value::integer(static_cast<std::int64_t>(v)));
        pos_ += 2 + n;
        return true;
      }
      break;
    }
    case kShortBinUnicode: {
      const std::size_t n = p[1];
      if (end_ - pos_ >= 2 + n) {
        const std::string_view text(reinterpret_cast<const char*>(p + 2), n);
        stack_.push_back(Value::str(assembler_.intern(text)));
        pos_ += 2 + n;
        return true;
      }
      break;
    }
    case kNewFalse:
    case kNewTrue:
      stack_.push_back(Value::boolean(op == kNewTrue));
      ++pos_;
      return true;
    case kNone:
      stack_.push_back(Value::none());
      ++pos_;
      return true;
    case kFrame: pos_ += 9; return true;
    case kSetItems:
      if (!marks_.empty() && fastSetItems(frames_key)) {
        ++pos_;
        return true;
      }
      break;
    case kAppends:
      if (!marks_.empty() && fastAppends()) {
        ++pos_;
        return true;
      }
      break;
    case kEmptyDict:
      if (lane_list_.tag == VTag::kContainer && !marks_.empty() && marks_.back() == stack_.size() &&
          marks_.back() > 0) {
        const Value& under = stack_[marks_.back() - 1];
        if (under.bits == lane_list_.bits && under.aux == lane_list_.aux && under.tag == VTag::kContainer &&
            eventLane())
          return true;
      }
      [[fallthrough]];
    case kEmptyList:
      if (pool_.live() < options_.limits.max_stack_values) {
        stack_.push_back(pool_.ref(pool_.create(op == kEmptyDict ? CKind::kDict : CKind::kList)));
        ++pos_;
        return true;
      }
      break;
    case kBinPut:
      if (!stack_.empty() && p[1] < memo_.size()) break;  // overwrites go the general way
      [[fallthrough]];
    case kMemoize:
      if (!stack_.empty() && (op == kMemoize || p[1] == memo_.size()) && memo_.size() < memo_.capacity()) {
        const Value& top = stack_.back();
        if (top.tag == VTag::kContainer) {
          Container* c = pool_.get(top);
          if (!c) break;
          c->memo_slots.push_back(static_cast<std::uint32_t>(memo_.size()));
        }
        memo_.push_back(top);
        pos_ += op == kMemoize ? 1 : 2;
        return true;
      }
      break;
    default: break;
  }
  return false;
}

// APPENDS of trace entries and plain values, without the general conversion machinery.
// Returns false (touching nothing) when the general path must run.
bool PickleMachine::fastAppends() {
  const std::size_t from = marks_.back();
  if (from == 0) return false;
  const Value target = stack_[from - 1];
  Container* list = pool_.get(target);
  if (!list || list->kind != CKind::kList) return false;
  if (list->items.size() + list->events.size() + (stack_.size() - from) > options_.limits.max_container_items)
    return false;
  // A list of already-converted frames (a stack's frames, shared through the memo).
  bool all_frames = true;
  for (std::size_t i = from; i < stack_.size() && all_frames; ++i) all_frames = stack_[i].tag == VTag::kFrame;
  if (all_frames) {
    list->items.insert(list->items.end(), stack_.begin() + static_cast<std::ptrdiff_t>(from), stack_.end());
    list->frame_items += static_cast<std::uint32_t>(stack_.size() - from);
    stack_.resize(from);
    marks_.pop_back();
    return true;
  }
  // All items must be trace-entry dicts (the bulk of a snapshot) for this path.
  for (std::size_t i = from; i < stack_.size(); ++i) {
    Container* d = pool_.get(stack_[i]);
    if (!d || d->kind != CKind::kDict || !assembler_.looksLikeEvent(*d)) return false;
  }
  for (std::size_t i = from; i < stack_.size(); ++i) {
    const Value item = stack_[i];
    Container* d = pool_.get(item);
    if (!d || !assembler_.convertEventFast(*list, *d)) {
      // A malformed entry, or one dict listed twice (memo) and already converted: let the
      // general path report it with its message.
      stack_.erase(stack_.begin() + static_cast<std::ptrdiff_t>(from), stack_.begin() + static_cast<std::ptrdiff_t>(i));
      return false;
    }
    replaceMemoSlots(*d, Value::consumed());
    pool_.release(item.handle(), Value::consumed());
  }
  stack_.resize(from);
  marks_.pop_back();
  return true;
}

// SETITEMS into a dict with no key that needs converting: one bulk copy. Returns false
// (touching nothing) when the general path must run.
bool PickleMachine::fastSetItems(StringId frames_key) {
  const std::size_t from = marks_.back();
  if (from == 0 || (stack_.size() - from) % 2 != 0) return false;
  Container* dict = pool_.get(stack_[from - 1]);
  if (!dict || dict->kind != CKind::kDict) return false;
  if (dict->items.size() + (stack_.size() - from) > options_.limits.max_container_items) return false;
  for (std::size_t i = from; i < stack_.size(); i += 2) {
    const Value& k = stack_[i];
    Value& v = stack_[i + 1];
    if (v.tag == VTag::kContainer && !pool_.get(v)) v = pool_.resolve(v);
    if (k.tag == VTag::kStr && k.strId() == frames_key && v.tag == VTag::kContainer) {
      auto conv = assembler_.onDictSet(k, v);
      if (!conv) return false;  // the general path reports the error
      if (conv->converted) applyConversion(v, *conv, &v);
    }
  }
  if (directEvent(from, *dict)) return true;
  dict->items.insert(dict->items.end(), stack_.begin() + static_cast<std::ptrdiff_t>(from), stack_.end());
  stack_.resize(from);
  marks_.pop_back();
  return true;
}

// A fresh trace entry that is the only pending item of a list being filled (the shape of
// every entry of device_traces): converted straight from the stack into the list's events,
// without staging its items. Returns false (touching nothing) otherwise.
bool PickleMachine::directEvent(std::size_t from, Container& dict) {
  if (!dict.items.empty() || dict.extra_refs != 0 || marks_.size() < 2 || from == stack_.size()) return false;
  const std::size_t list_mark = marks_[marks_.size() - 2];
  if (list_mark == 0 || list_mark + 1 != from) return false;
  const Value& k0 = stack_[from];
  if (k0.tag != VTag::kStr || k0.strId() != assembler_.actionKey()) return false;
  Container* list = pool_.get(stack_[list_mark - 1]);
  if (!list || list->kind != CKind::kList || !list->items.empty()) return false;
  if (list->events.size() >= options_.limits.max_container_items) return false;
  if (list->events.capacity() == 0) reserveForEvents(*list);
  if (!assembler_.convertEventFast(*list, std::span<const Value>(stack_.data() + from, stack_.size() - from)))
    return false;
  const Value self = stack_[from - 1];
  lane_list_ = stack_[list_mark - 1];
  replaceMemoSlots(dict, Value::consumed());
  pool_.release(self.handle(), Value::consumed());
  stack_.resize(from - 1);
  marks_.pop_back();
  return true;
}

// Makes room for the trace entries still to come, in the list and in the memo (each entry
// memoizes a few objects). Large reservations ask for transparent huge pages: far fewer
// page faults while they fill.
void PickleMachine::reserveForEvents(Container& list) {
  const std::size_t hint = eventCapacityHint();
  try {
    list.events.reserve(hint);
    list.times.reserve(hint, 2);  // times a few microseconds apart take a byte or two
    adviseHugePages(list.events.data(), list.events.capacity() * sizeof(TraceEvent));
    if (memo_.capacity() < memo_.size() + 3 * hint) {
      memo_.reserve(memo_.size() + 3 * hint);
      adviseHugePages(memo_.data(), memo_.capacity() * sizeof(Value));
    }
  } catch (const std::bad_alloc&) {
    // Only a hint: the vectors grow as usual.
  }
}

// How many trace entries the rest of the input could hold: an entry takes at least ~20
// bytes. Reserving that much address space up front costs no memory until it is touched
// and saves the copies and page faults of growing the list by doubling. No cap below the
// container limit: a list that outgrows its reservation is copied whole, the old and the new
// list both in memory, and that copy was the reader's peak (20 M entries: 2.37 GB against
// 1.41 GB held; docs/performance.md section 7c).
std::size_t PickleMachine::eventCapacityHint() const {
  const std::uint64_t decoded = base_ + end_;
  const std::uint64_t stored = source_.storedConsumed();
  if (stored == 0 || stored_size_ < stored) return 0;
  const double ratio = static_cast<double>(decoded) / static_cast<double>(stored);
  const double remaining = static_cast<double>(stored_size_ - stored) * ratio + static_cast<double>(end_ - pos_);
  const double hint = remaining / 20.0;
  return static_cast<std::size_t>(std::min(hint, static_cast<double>(options_.limits.max_container_items)));
}

}  // namespace reservoir::traces::detail
