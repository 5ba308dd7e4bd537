// Interning of frames and stacks into a Snapshot (each distinct one stored once).
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "reservoir/traces/snapshot.h"

namespace reservoir::traces {

class StackInterner {
 public:
  // Indexes the frames and stacks `snapshot` already holds; `snapshot` must outlive this.
  explicit StackInterner(Snapshot* snapshot);

  FrameId frame(const Frame& frame);
  FrameId frame(std::string_view filename, std::int64_t line, std::string_view name);
  StackId stack(std::span<const FrameId> frames);
  StackId emptyStack() { return stack({}); }

 private:
  struct FrameHash {
    std::size_t operator()(const Frame& f) const noexcept;
  };
  static std::uint64_t hashFrames(std::span<const FrameId> frames);
  void growStacks();

  Snapshot* snap_;
  std::unordered_map<Frame, FrameId, FrameHash> frames_;
  // Open addressing over stack ids: slot = id + 1, 0 = empty.
  std::vector<std::uint32_t> stack_slots_;
  std::vector<std::uint64_t> stack_hashes_;
};

}  // namespace reservoir::traces
