// The real traces the traces tests run over: the shared ones (listed in MANIFEST.json, may be
// absent) and the samples in traces/samples (always present).
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace reservoir::test {

struct TraceFile {
  std::string label;  // path relative to its folder, e.g. "synth/default-s1.pickle"
  std::filesystem::path path;
};
// For gtest's messages about a parameterised test.
inline void PrintTo(const TraceFile& file, std::ostream* os) { *os << file.label; }

// The entries of ../shared/traces/MANIFEST.json, in its order; empty when the folder is absent.
std::vector<TraceFile> sharedTraceFiles();
// Every *.pickle under traces/samples (sorted), labelled "samples/...".
std::vector<TraceFile> sampleTraceFiles();
// A gtest-safe name for a label ("synth/default-s1.pickle" -> "synth_default_s1").
std::string testNameOf(const std::string& label);

}  // namespace reservoir::test
