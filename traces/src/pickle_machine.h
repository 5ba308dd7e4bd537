// The pickle virtual machine: reads opcodes from a ByteSource, keeps the stack, marks and
// memo, and hands completed objects to the SnapshotAssembler. Iterative (no recursion),
// bounded by ReadLimits, and it executes nothing.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "byte_source.h"
#include "pickle_values.h"
#include "reservoir/traces/read_problem.h"
#include "reservoir/traces/reader.h"
#include "snapshot_assembler.h"

namespace reservoir::traces::detail {

class LaneCursor;

class PickleMachine {
 public:
  // `compressed`: the stored size says nothing about how long the pickle is.
  PickleMachine(ByteSource& source, std::uint64_t stored_size, bool compressed, const ReadOptions& options);

  // Runs to STOP and returns the assembled snapshot. An error carries its class's headline and
  // its offset in the pickle stream (Status::byteOffset).
  Expected<Snapshot> run();
  [[nodiscard]] std::uint64_t bytesRead() const { return base_ + pos_; }

 private:
  // --- input
  bool fill(std::size_t need);  // make `need` bytes available at pos_; false at end of data
  Status truncated(std::uint8_t op, std::size_t need);
  [[nodiscard]] std::uint64_t offset() const { return base_ + pos_; }
  // Errors at the current opcode: damaged structure unless a class is given (read_problem.h).
  Status fail(std::string detail) const;
  Status fail(ReadProblem problem, std::string detail, std::string_view specific = {}) const;
  Status fail(const Status& error) const;
  Status failAt(std::uint64_t at, const Status& error) const;
  Status refuseCode(std::uint8_t op);
  Status badHeader();

  Status checkHeader();
  Status refill();
  // The reader's memory against ReadLimits' budget (checked after each MiB of pickle).
  [[nodiscard]] std::uint64_t memoryInUse() const;
  Status checkMemory();
  // The cap's refusal: `used` bytes needed with `read` bytes of pickle read.
  Status overCap(std::uint64_t used, std::uint64_t read);
  [[nodiscard]] std::string capOrigin() const;  // "1024 MiB + 64 x the 0.10 MiB compressed file" or ""
  // Whether the memo may take one more entry: when it must grow, its old and new tables are both
  // in memory for a moment, and that moment must fit under the cap too.
  [[nodiscard]] bool memoMayGrow(std::uint64_t new_size) const;
  Status memoGrowthRefused();

  // --- opcodes
  Status step(std::uint8_t op);
  Status setItem();
  Status append();
  Status memoAtIndex(std::uint8_t op);
  Status refuseOpcode(std::uint8_t op);
  bool fastStep(std::uint8_t op, StringId frames_key);
  Status pushString(std::uint8_t op, std::size_t len_bytes, bool is_bytes);
  Status pushLong(std::uint8_t op, std::size_t len_bytes);
  Status pushInt(std::uint8_t op, std::size_t width);
  Status pushBinFloat();
  Status memoPut(std::uint64_t index);
  // The memo entries that still refer to `c` take `replacement` (it was converted or released).
  void replaceMemoSlots(const Container& c, const Value& replacement);
  Status memoGet(std::uint64_t index);
  Status makeContainer(CKind kind, std::size_t from);
  Status setItems(std::size_t from);
  Status appendItems(std::size_t from);
  Status insertIntoList(std::uint32_t list_handle, const Value& raw_item);
  Status countScalar(std::uint32_t list_handle, const Value& item);
  Status setInDict(std::uint32_t dict_handle, const Value& raw_key, const Value& raw_value);
  Status applyConversion(const Value& original, const Conversion& conv, Value* stored);
  Status push(const Value& v);
  Status popMark(std::size_t* from);
  Status checkCancel();
  bool fastSetItems(StringId frames_key);
  bool fastAppends();
  bool directEvent(std::size_t from, Container& dict);
  // The event lane (pickle_event_lane.cpp).
  bool eventLane();
  bool laneValue(LaneCursor& c, Value* out);
  bool laneFrameList(LaneCursor& c, Value* out);
  bool laneMemoize(LaneCursor& c, const Value& v);
  [[nodiscard]] std::size_t eventCapacityHint() const;
  void reserveForEvents(Container& list);

  ByteSource& source_;
  std::uint64_t stored_size_;
  std::uint64_t plain_size_;  // the pickle's size when it is not compressed, else 0
  const ReadOptions& options_;
  std::uint64_t memory_cap_;  // memoryCapFor this input; 0: none
  bool compressed_;

  std::vector<std::uint8_t> buf_;
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
  std::uint64_t base_ = 0;  // stream offset of buf_[0]
  bool eof_ = false;
  Status read_error_;  // set when the source failed (corrupt compressed data, I/O)
  std::uint64_t op_offset_ = 0;
  std::uint64_t next_progress_ = 0;
  std::uint64_t next_memory_check_ = 0;

  int protocol_ = 0;
  std::uint64_t stack_limit_ = 0;
  std::vector<Value> stack_;
  std::vector<std::size_t> marks_;
  std::vector<Value> memo_;
  ContainerPool pool_;
  SnapshotAssembler assembler_;
  Value lane_list_ = Value::none();  // the list the last directly converted entry went into
  std::array<Value, 48> lane_pairs_{};
  std::array<FrameId, 512> lane_frames_{};
  StringId lane_last_str_;  // the last string the lane interned, and its stored text
  std::string_view lane_last_view_;
};

}  // namespace reservoir::traces::detail
