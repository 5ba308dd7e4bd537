// The real traces the replay tests run on: the shared ones (when ../shared/traces is beside
// the checkout) and the project's own (traces/samples, tests/data/traces).
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "reservoir/replay/capture_facts.h"
#include "test_paths.h"

namespace reservoir::test {

struct TraceCase {
  std::string name;  // relative name, for test names
  std::filesystem::path path;
  std::vector<std::string> reset_peaks;  // where the capture called reset_peak_memory_stats()
};

inline void PrintTo(const TraceCase& c, std::ostream* os) { *os << c.name; }

// Where the capture reset peaks: the capture JSON says so where it has
// `reset_peaks_after_event` (scale/); the older resume captures did not write it: resume.py
// measures step 2 after reset_peak_memory_stats() (a resumed run trains only step 2; a base run
// resets again after saving the checkpoint).
inline std::vector<std::string> resetPointsFor(const std::string& name, const std::filesystem::path& path) {
  if (const auto facts = replay::findCaptureFacts(path.string()); facts && facts->reset_peaks_after_event)
    return {"event:" + std::to_string(*facts->reset_peaks_after_event)};
  if (name.find("resume-") == std::string::npos) return {};
  if (name.find("/fresh.") != std::string::npos) return {"after:state_dict_saver.py:save"};
  return {"before:resume.py:train_step#1"};
}

inline std::vector<TraceCase> collectTraces(const std::filesystem::path& root) {
  std::vector<TraceCase> out;
  if (root.empty() || !std::filesystem::exists(root)) return out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    const auto p = entry.path();
    const auto s = p.string();
    if (s.ends_with(".pickle") || s.ends_with(".pickle.zst") || s.ends_with(".pickle.gz")) {
      TraceCase c;
      c.name = std::filesystem::relative(p, root).string();
      c.path = p;
      c.reset_peaks = resetPointsFor(c.name, c.path);
      out.push_back(c);
    }
  }
  std::sort(out.begin(), out.end(), [](const TraceCase& a, const TraceCase& b) { return a.name < b.name; });
  return out;
}

inline std::string testName(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

}  // namespace reservoir::test
