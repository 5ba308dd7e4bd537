// A command line's text split into words as a POSIX shell would, with no shell: blanks separate
// words; '...' keeps everything literally; "..." keeps everything but \" \\ \$ \` (escaped); a
// backslash outside quotes keeps the next character. Nothing is expanded or run ($, *, `, ~ stay
// as written). `reservoir report --variant NAME=EDITS` reads its EDITS so.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "reservoir/core/status.h"

namespace reservoir::cli {

Expected<std::vector<std::string>> splitWords(std::string_view text);

}  // namespace reservoir::cli
