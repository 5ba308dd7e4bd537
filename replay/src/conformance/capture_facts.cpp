#include "reservoir/replay/capture_facts.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace reservoir::replay {

Expected<CaptureFacts> readCaptureFacts(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::error(path + ": cannot open");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::error(path + ": not a JSON object");
  CaptureFacts f;
  f.path = path;
  if (j.contains("fraction") && j["fraction"].is_number()) f.fraction = j["fraction"].get<double>();
  if (j.contains("device_total") && j["device_total"].is_number_integer())
    f.device_total = j["device_total"].get<std::uint64_t>();
  if (j.contains("memory_stats") && j["memory_stats"].is_object())
    for (auto& [k, v] : j["memory_stats"].items())
      if (v.is_number_integer()) f.memory_stats[k] = v.get<std::int64_t>();
  if (j.contains("reset_peaks_after_event") && j["reset_peaks_after_event"].is_number_unsigned())
    f.reset_peaks_after_event = j["reset_peaks_after_event"].get<std::uint32_t>();
  for (auto& [k, v] : j.items()) {
    if (!v.is_object() || k == "memory_stats" || k == "config") continue;
    for (auto& [k2, v2] : v.items())
      if (v2.is_number_integer()) f.step_figures[k + "." + k2] = v2.get<std::int64_t>();
  }
  return f;
}

std::string captureJsonPath(const std::string& trace_path) {
  std::filesystem::path p(trace_path);
  for (int i = 0; i < 2 && p.has_extension(); ++i) {
    const auto ext = p.extension().string();
    if (ext == ".gz" || ext == ".zst" || ext == ".pickle" || ext == ".pkl") p.replace_extension();
  }
  p += ".json";
  return p.string();
}

std::optional<CaptureFacts> findCaptureFacts(const std::string& trace_path) {
  const std::filesystem::path p = captureJsonPath(trace_path);
  std::error_code ec;
  if (!std::filesystem::exists(p, ec)) return std::nullopt;
  auto f = readCaptureFacts(p.string());
  if (!f) return std::nullopt;
  return *f;
}

}  // namespace reservoir::replay
