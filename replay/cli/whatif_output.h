// Rendering what-if reports: a table for people, JSON for machines.
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

#include "reservoir/replay/whatif.h"

namespace reservoir::cli {

nlohmann::json runJson(const traces::Snapshot& snap, const replay::RunResult& r);
nlohmann::json whatIfJson(const traces::Snapshot& snap, const replay::WhatIfReport& rep, const std::string& path);
void printWhatIf(std::ostream& out, const traces::Snapshot& snap, const replay::WhatIfReport& rep,
                 const std::string& path);

}  // namespace reservoir::cli
