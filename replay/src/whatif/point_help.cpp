// The point and selector syntax in words (point_help.h); parsePoint and parseFrameSpec (point.cpp) read it.
#include "reservoir/replay/point_help.h"

namespace reservoir::replay {

std::string_view pointSyntaxHelp() {
  return "Points (where an edit happens):\n"
         "  after:SPEC, before:SPEC   after each run of a frame ends, before each starts;\n"
         "                            SPEC is NAME, FILE:NAME or FILE:LINE, and #k picks the k-th run\n"
         "                            (after:state_dict_loader.py:load, before:train_step#2)\n"
         "  annotation:NAME:start     where a record_function range or annotation starts (or :end)\n"
         "  event:N                   right after recorded event N (0-based)\n"
         "  time:US                   at US microseconds on the trace's clock\n"
         "FILE matches the end of a frame's file name at a '/' (state_dict_loader.py matches\n"
         ".../checkpoint/state_dict_loader.py).\n"
         "Selectors (which allocations a release frees): NAME, FILE:NAME or FILE:LINE; an allocation\n"
         "matches when a frame of its stack does. release takes SELECTOR@POINT\n"
         "(optimizer.py:step@before:train_step), demand takes BYTES@POINT (4GiB@event:100).";
}

}  // namespace reservoir::replay
