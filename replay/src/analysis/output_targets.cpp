// Which files a command may write (output_targets.h).
#include "reservoir/replay/output_targets.h"

#include <fmt/format.h>

#include <filesystem>

#include "reservoir/replay/capture_facts.h"

namespace reservoir::replay {
namespace {

// Whether `x` and `y` name one regular file (or one path not made yet).
bool sameFile(const std::string& x, const std::string& y) {
  if (x.empty() || y.empty()) return false;
  std::error_code ec;
  const auto cx = std::filesystem::weakly_canonical(x, ec);
  if (ec) return x == y;
  const auto cy = std::filesystem::weakly_canonical(y, ec);
  if (ec || cx != cy) return false;
  return !std::filesystem::exists(cx, ec) || std::filesystem::is_regular_file(cx, ec);
}

// " (--measured)" for a labelled input, "" for the one trace of a command.
std::string whichInput(const NamedPath& input) { return input.first.empty() ? "" : " (" + input.first + ")"; }

Status againstInputs(const NamedPath& output, const std::vector<NamedPath>& inputs) {
  const auto& [label, path] = output;
  for (const auto& input : inputs) {
    if (input.second.empty()) continue;
    if (sameFile(path, input.second))
      return Status::usage(
          fmt::format("{} {} is the trace being read{}: write to another file", label, path, whichInput(input)));
    if (sameFile(path, captureJsonPath(input.second)))
      return Status::usage(fmt::format("{} {} is the trace's capture JSON (read beside {}{}): write to another file",
                                       label, path, input.second, whichInput(input)));
  }
  return {};
}

}  // namespace

Status checkOutputTargets(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs,
                          const std::vector<NamedPath>& read_too) {
  for (const auto& output : outputs) {
    if (output.second.find('\0') != std::string::npos)
      return Status::usage(
          fmt::format("{} contains a NUL byte, which no file name can hold: give another path", output.first));
    for (const auto& [what, path] : read_too)
      if (sameFile(output.second, path))
        return Status::usage(fmt::format("{} {} is {}: write to another file", output.first, output.second, what));
    if (output.second == "-")
      return Status::usage(fmt::format(
          "{} -: '-' names no file here (standard output is not written to): give a file name ('./-' for a file "
          "named '-')",
          output.first));
    if (Status st = againstInputs(output, inputs); !st.ok()) return st;
  }
  for (std::size_t i = 0; i < outputs.size(); ++i)
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      if (sameFile(outputs[i].second, outputs[j].second))
        return Status::usage(fmt::format("{} and {} name the same file ({}): give two files", outputs[i].first,
                                         outputs[j].first, outputs[i].second));
  return {};
}

}  // namespace reservoir::replay
