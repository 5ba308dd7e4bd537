// The what-if report as text, line for line what `reservoir whatif` prints for the same
// report (replay/cli/whatif_output.cpp), so the panel and the CLI can be compared directly.
#pragma once

#include <string>

#include "reservoir/replay/whatif.h"

namespace reservoir::gui {

std::string whatIfReportText(const traces::Snapshot& snap, const replay::WhatIfReport& rep, const std::string& path);

}  // namespace reservoir::gui
