// How a stack frame's file is shortened for display: one rule for every front end that has
// little room (the HTML report's stacks, the GUI's tables and details panes). The full path
// goes where the reader can still reach it (a title, a tooltip).
#pragma once

#include <string>
#include <string_view>

namespace reservoir::replay {

// "…/optim/adam.py": the last two parts of a path, after an ellipsis (U+2026); a path of
// one or two parts is returned whole.
std::string shortFramePath(std::string_view path);

}  // namespace reservoir::replay
