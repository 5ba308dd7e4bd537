#include "trace_corpus.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>

#include "test_paths.h"

namespace reservoir::test {

std::vector<TraceFile> sharedTraceFiles() {
  std::vector<TraceFile> files;
  const std::filesystem::path dir = sharedTracesDir();
  if (dir.empty()) return files;
  std::ifstream in(dir / "MANIFEST.json");
  const auto manifest = nlohmann::ordered_json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!manifest.is_object()) return files;
  for (const auto& [name, entry] : manifest.items()) files.push_back({name, dir / name});
  return files;
}

std::vector<TraceFile> sampleTraceFiles() {
  std::vector<TraceFile> files;
  const std::filesystem::path dir = samplesDir();
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().extension() != ".pickle") continue;
    files.push_back({"samples/" + std::filesystem::relative(e.path(), dir).generic_string(), e.path()});
  }
  std::sort(files.begin(), files.end(), [](const TraceFile& a, const TraceFile& b) { return a.label < b.label; });
  return files;
}

std::string testNameOf(const std::string& label) {
  std::string name = label;
  if (name.size() > 7 && name.ends_with(".pickle")) name.resize(name.size() - 7);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

}  // namespace reservoir::test
