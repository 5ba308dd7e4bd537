// Where memory comes from in the program: the call graph of the trace's stack frames
// (Boost.Graph; functions as vertices, caller -> callee edges) and call trees that attribute
// live bytes to call sites, top-down and bottom-up.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "reservoir/traces/snapshot.h"

namespace reservoir::replay {

struct Function {
  StringId file;
  StringId name;
  std::string point_name;         // "file.py:name", unique in the trace (longer path suffix if needed)
  std::uint64_t events = 0;       // trace events with this function on the stack
  std::uint64_t alloc_bytes = 0;  // requested bytes of the allocations made under it
  std::uint32_t allocations = 0;
  std::uint32_t runs = 0;   // maximal runs of consecutive events under it
  std::uint32_t depth = 0;  // shortest distance from a root (a function that calls nothing seen as a caller)
};

class CallGraph {
 public:
  CallGraph(const traces::Snapshot& snap, std::size_t device_index);
  ~CallGraph();
  CallGraph(CallGraph&&) noexcept;
  CallGraph& operator=(CallGraph&&) noexcept;

  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] const Function& function(std::size_t v) const;
  [[nodiscard]] std::vector<std::size_t> callers(std::size_t v) const;
  [[nodiscard]] std::vector<std::size_t> callees(std::size_t v) const;
  // The function of a frame.
  [[nodiscard]] std::size_t functionOf(FrameId frame) const;
  // Functions under which at least `min_bytes` were allocated, most first.
  [[nodiscard]] std::vector<std::size_t> byAllocatedBytes(std::uint64_t min_bytes) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A tree of call sites (frames) weighted by live bytes: top-down (root = outermost frames) or
// bottom-up (root = the allocating frames).
struct CallTreeNode {
  FrameId frame;           // invalid for the root
  std::int64_t bytes = 0;  // live bytes under this node
  std::uint32_t blocks = 0;
  std::uint32_t parent = 0;
  std::vector<std::uint32_t> children;  // largest first
};

struct CallTree {
  std::vector<CallTreeNode> nodes;  // nodes[0] is the root
  [[nodiscard]] std::int64_t total() const { return nodes.empty() ? 0 : nodes[0].bytes; }
};

enum class TreeDirection : std::uint8_t { kTopDown, kBottomUp };

// `live`: (allocation stack, bytes) of the blocks to attribute.
CallTree buildCallTree(const traces::Snapshot& snap, std::span<const std::pair<StackId, std::int64_t>> live,
                       TreeDirection direction);

}  // namespace reservoir::replay
