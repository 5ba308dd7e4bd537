// How every result names its trace: the path, and the rank its file's name gives.
#include "reservoir/replay/report_json.h"
#include "reservoir/traces/dump_folder.h"

namespace reservoir::replay {

void nameTrace(nlohmann::json& j, const std::string& path) {
  j["trace"] = path;
  if (const auto rank = traces::rankInFileName(path)) j["rank"] = *rank;
}

nlohmann::json traceNamed(const std::string& path) {
  nlohmann::json j = nlohmann::json::object();
  nameTrace(j, path);
  return j;
}

}  // namespace reservoir::replay
