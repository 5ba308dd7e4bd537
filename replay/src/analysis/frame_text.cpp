// The display rule for a frame's file (frame_text.h).
#include "reservoir/replay/frame_text.h"

namespace reservoir::replay {

std::string shortFramePath(std::string_view path) {
  const auto last = path.rfind('/');
  if (last == std::string_view::npos || last == 0) return std::string(path);
  const auto before = path.rfind('/', last - 1);
  if (before == std::string_view::npos || before == 0) return std::string(path);
  return "\u2026" + std::string(path.substr(before));
}

}  // namespace reservoir::replay
