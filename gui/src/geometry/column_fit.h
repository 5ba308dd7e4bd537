// Column widths for a table that must fit its width: each column its wanted width while they
// all fit, else the widest capped at one level (their text elided, the tooltip has it whole),
// never below a floor.
#pragma once

#include <vector>

namespace reservoir::gui {

// `wanted`: each column's width for its contents; `room`: the width they may share. The widths
// sum to at most `room` unless `floor` per column does not fit (then each capped column is at
// `floor`); columns narrower than the cap keep their wanted width.
std::vector<int> fitColumns(const std::vector<int>& wanted, int room, int floor);

}  // namespace reservoir::gui
