#include "reservoir/traces/stack_interner.h"

#include <algorithm>

namespace reservoir::traces {

std::size_t StackInterner::FrameHash::operator()(const Frame& f) const noexcept {
  std::uint64_t h = f.filename.value();
  h = h * 0x9E3779B97F4A7C15ull ^ f.name.value();
  h = h * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(f.line);
  return static_cast<std::size_t>(h ^ (h >> 29));
}

std::uint64_t StackInterner::hashFrames(std::span<const FrameId> frames) {
  std::uint64_t h = 0xcbf29ce484222325ull ^ frames.size();
  for (FrameId f : frames) h = (h ^ f.value()) * 0x100000001b3ull;
  return h ^ (h >> 31);
}

StackInterner::StackInterner(Snapshot* snapshot) : snap_(snapshot), stack_slots_(256, 0) {
  for (std::uint32_t i = 0; i < snap_->frames.size(); ++i) frames_.emplace(snap_->frames[i], FrameId(i));
  // Existing stacks are assumed distinct (they were interned when they were made).
  for (std::uint32_t i = 0; i < snap_->stackCount(); ++i) {
    stack_hashes_.push_back(hashFrames(snap_->stack(StackId(i))));
    if (stack_hashes_.size() * 2 > stack_slots_.size()) growStacks();
    const std::size_t mask = stack_slots_.size() - 1;
    std::size_t j = stack_hashes_.back() & mask;
    while (stack_slots_[j] != 0) j = (j + 1) & mask;
    stack_slots_[j] = i + 1;
  }
}

FrameId StackInterner::frame(const Frame& frame) {
  auto [it, inserted] = frames_.try_emplace(frame, FrameId(static_cast<std::uint32_t>(snap_->frames.size())));
  if (inserted) snap_->frames.push_back(frame);
  return it->second;
}

FrameId StackInterner::frame(std::string_view filename, std::int64_t line, std::string_view name) {
  return frame(Frame{snap_->strings.intern(filename), snap_->strings.intern(name), line, {}});
}

void StackInterner::growStacks() {
  std::vector<std::uint32_t> bigger(stack_slots_.size() * 2, 0);
  const std::size_t mask = bigger.size() - 1;
  for (std::uint32_t s : stack_slots_) {
    if (s == 0) continue;
    std::size_t j = stack_hashes_[s - 1] & mask;
    while (bigger[j] != 0) j = (j + 1) & mask;
    bigger[j] = s;
  }
  stack_slots_ = std::move(bigger);
}

StackId StackInterner::stack(std::span<const FrameId> frames) {
  const std::uint64_t h = hashFrames(frames);
  const std::size_t mask = stack_slots_.size() - 1;
  std::size_t j = h & mask;
  for (; stack_slots_[j] != 0; j = (j + 1) & mask) {
    const std::uint32_t id = stack_slots_[j] - 1;
    if (stack_hashes_[id] != h) continue;
    auto existing = snap_->stack(StackId(id));
    if (std::equal(existing.begin(), existing.end(), frames.begin(), frames.end())) return StackId(id);
  }
  const auto id = static_cast<std::uint32_t>(snap_->stackCount());
  snap_->stack_frames.insert(snap_->stack_frames.end(), frames.begin(), frames.end());
  snap_->stack_offsets.push_back(static_cast<std::uint32_t>(snap_->stack_frames.size()));
  stack_hashes_.push_back(h);
  stack_slots_[j] = id + 1;
  if (stack_hashes_.size() * 2 > stack_slots_.size()) growStacks();
  return StackId(id);
}

}  // namespace reservoir::traces
