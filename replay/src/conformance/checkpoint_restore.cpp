#include "conformance/checkpoint_restore.h"

#include <array>
#include <string_view>

namespace reservoir::replay::detail {
namespace {

bool isRestoreFrame(std::string_view name) {
  static constexpr std::array<std::string_view, 3> kNames = {
      "apply_checkpoint_execution_state_in_allocator", "setCheckpointPoolState", "setSegmentStateToCheckpoint"};
  for (std::string_view n : kNames)
    if (name == n || (name.size() > n.size() && name.ends_with(n) && name[name.size() - n.size() - 1] == ':'))
      return true;
  return false;
}

}  // namespace

std::vector<bool> checkpointRestoreStacks(const traces::Snapshot& snapshot) {
  std::vector<bool> restores(snapshot.stackCount(), false);
  std::vector<signed char> frame_is_restore(snapshot.frames.size(), -1);
  for (std::size_t s = 0; s < restores.size(); ++s) {
    for (const FrameId f : snapshot.stack(StackId(static_cast<StackId::rep_type>(s)))) {
      signed char& known = frame_is_restore[f.value()];
      if (known < 0) known = isRestoreFrame(snapshot.str(snapshot.frames[f.value()].name)) ? 1 : 0;
      if (known) {
        restores[s] = true;
        break;
      }
    }
  }
  return restores;
}

}  // namespace reservoir::replay::detail
