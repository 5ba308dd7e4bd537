// Column widths for a table that must fit its width: each column its wanted width while they
// all fit, else the widest capped at one level (their text elided, the tooltip has it whole),
// never below each column's floor (its header's width: a header stays readable).
#pragma once

#include <vector>

namespace reservoir::gui {

// `wanted`: each column's width for its contents; `floors`: the least each may have (at most its
// wanted width is used); `room`: the width they may share. The widths are min(wanted, max(floor,
// cap)) for the largest cap whose widths sum to at most `room`; when even the floors do not fit,
// the floors.
std::vector<int> fitColumns(const std::vector<int>& wanted, const std::vector<int>& floors, int room);

}  // namespace reservoir::gui
