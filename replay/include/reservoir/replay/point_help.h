// The syntax of points and frame selectors in words, as parsePoint and parseFrameSpec read them:
// one text that the command line's --help and the GUI's Help menu and tooltips both show.
#pragma once

#include <string_view>

namespace reservoir::replay {

// Points (where an edit happens) and frame selectors (which stacks a release frees), with examples.
std::string_view pointSyntaxHelp();

}  // namespace reservoir::replay
