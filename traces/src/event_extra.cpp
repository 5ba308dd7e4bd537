#include "reservoir/traces/event_extra.h"

namespace reservoir::traces {

EventExtraTable::EventExtraTable() {
  items_.emplace_back();
  index_.emplace(items_.front(), 0);
}

EventExtraId EventExtraTable::intern(const EventExtra& extra) {
  if (items_[last_] == extra) return EventExtraId(last_);
  std::swap(last_, before_last_);
  if (items_[last_] == extra) return EventExtraId(last_);
  const auto [it, added] = index_.try_emplace(extra, static_cast<std::uint32_t>(items_.size()));
  if (added) items_.push_back(extra);
  last_ = it->second;
  return EventExtraId(last_);
}

std::size_t EventExtraTable::Hash::operator()(const EventExtra& x) const noexcept {
  std::uint64_t h = static_cast<std::uint64_t>(x.pool.first) * 0x9E3779B97F4A7C15ull;
  const auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 0x100000001B3ull + (h >> 29); };
  mix(x.stream);
  mix(static_cast<std::uint64_t>(x.pool.second));
  mix(x.forward_stack.value());
  mix(x.compile_context.value());
  mix(x.user_metadata.value());
  mix((x.has_frames ? 1u : 0u) | (x.has_pool ? 2u : 0u) | (x.has_forward_frames ? 4u : 0u));
  return static_cast<std::size_t>(h);
}

}  // namespace reservoir::traces
