// Strong index types: a StackId cannot be passed where a FrameId is expected.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <limits>

namespace reservoir {

template <typename Tag, typename Rep = std::uint32_t>
class StrongId {
 public:
  using rep_type = Rep;
  static constexpr Rep kInvalid = std::numeric_limits<Rep>::max();

  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep value) : value_(value) {}

  [[nodiscard]] constexpr Rep value() const { return value_; }
  [[nodiscard]] constexpr bool valid() const { return value_ != kInvalid; }
  constexpr explicit operator bool() const { return valid(); }

  constexpr auto operator<=>(const StrongId&) const = default;

 private:
  Rep value_ = kInvalid;
};

struct StringTag;
struct FrameTag;
struct StackTag;
struct AllocationTag;

// Interned string (filenames, function names, metadata).
using StringId = StrongId<StringTag>;
// Interned frame {filename, line, name}.
using FrameId = StrongId<FrameTag>;
// Interned stack: a list of frames, innermost first. The empty stack is a valid id.
using StackId = StrongId<StackTag>;
// One allocation's identity over its lifetime (alloc .. free_completed); an address is
// reused after a free, an AllocationId never is.
using AllocationId = StrongId<AllocationTag>;

}  // namespace reservoir

template <typename Tag, typename Rep>
struct std::hash<reservoir::StrongId<Tag, Rep>> {
  std::size_t operator()(const reservoir::StrongId<Tag, Rep>& id) const noexcept {
    return std::hash<Rep>{}(id.value());
  }
};
