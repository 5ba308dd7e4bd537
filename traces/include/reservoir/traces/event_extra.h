// The fields of a trace entry that few entries carry or that repeat across a whole trace
// (the stream, the private pool, the forward frames, compile_context, user_metadata and which
// keys the entry had): interned once per distinct combination in the snapshot's EventExtraTable,
// the entry keeping only its EventExtraId. Real traces have a few hundred combinations at most.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "reservoir/core/strong_id.h"

namespace reservoir::traces {

struct PoolId {
  std::int64_t first = 0;
  std::int64_t second = 0;
  [[nodiscard]] bool isDefault() const { return first == 0 && second == 0; }
  // A pool the replay inferred because nothing recorded names it (a pool that gave back every
  // segment before the dump): (-1, k). torch's own ids are never negative.
  [[nodiscard]] bool inferred() const { return first < 0; }
  auto operator<=>(const PoolId&) const = default;
};

struct EventExtraTag;
// Index into a snapshot's EventExtraTable; EventExtraId(0) is the entry with none of them.
using EventExtraId = StrongId<EventExtraTag>;
inline constexpr EventExtraId kNoExtra{0};
// The most distinct extras a snapshot holds besides kNoExtra (an entry keeps its id in 24 bits):
// far more than a real trace has (one per pool, forward stack, compile context and metadata
// string in use together).
inline constexpr std::uint32_t kMaxEventExtras = (1u << 24) - 1;

struct EventExtra {
  // The recorded cudaStream_t value (0 = the default stream): a trace uses a few.
  std::uint64_t stream = 0;
  PoolId pool;               // the private pool it went to ((0, 0): the default pools)
  StackId forward_stack;     // valid only with has_forward_frames
  StringId compile_context;  // invalid when absent
  StringId user_metadata;    // invalid when absent
  bool has_frames = false;   // the entry carried a `frames` key (even an empty one)
  bool has_pool = false;     // the entry carried `pool_id` (torch after 2.11, PR #177717)
  // `forward_frames`: for a backward-pass entry (no Python frames of its own with
  // stacks="python"), the Python stack of the forward op it belongs to.
  bool has_forward_frames = false;
  bool operator==(const EventExtra&) const = default;
};

class EventExtraTable {
 public:
  EventExtraTable();  // holds kNoExtra

  // The id of `extra`, added if it is new.
  EventExtraId intern(const EventExtra& extra);
  [[nodiscard]] const EventExtra& operator[](EventExtraId id) const { return items_[id.value()]; }
  [[nodiscard]] std::size_t size() const { return items_.size(); }

 private:
  struct Hash {
    std::size_t operator()(const EventExtra& x) const noexcept;
  };
  std::vector<EventExtra> items_;
  std::unordered_map<EventExtra, std::uint32_t, Hash> index_;
  // The two ids interned last: consecutive entries mostly share one, or alternate between two
  // (work on two streams).
  std::uint32_t last_ = 0, before_last_ = 0;
};

}  // namespace reservoir::traces
