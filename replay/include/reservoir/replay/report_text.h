// The what-if report as text for people: what `reservoir whatif` prints and the GUI's
// what-if panel shows (one renderer, so the two cannot drift apart).
#pragma once

#include <string>

#include "reservoir/replay/whatif.h"

namespace reservoir::replay {

std::string whatIfReportText(const traces::Snapshot& snap, const WhatIfReport& rep, const std::string& path);

}  // namespace reservoir::replay
