#include "reservoir/replay/plugins.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "reservoir/core/version.h"

namespace reservoir::replay {
namespace {

namespace fs = std::filesystem;

#ifndef RESERVOIR_PLUGIN_DIR_FROM_BIN
#define RESERVOIR_PLUGIN_DIR_FROM_BIN "../lib/reservoir"
#endif

// The folder of the executable or shared object this function was linked into. For the main
// program the loader knows no path (argv[0] may be a bare name found on PATH): /proc/self/exe.
std::string folderOfThisCode() {
  Dl_info info{};
  link_map* map = nullptr;
  if (dladdr1(reinterpret_cast<void*>(&folderOfThisCode), &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) == 0)
    return {};
  const bool main_program = map == nullptr || map->l_name == nullptr || map->l_name[0] == '\0';
  std::error_code ec;
  const fs::path self = fs::canonical(main_program ? "/proc/self/exe" : info.dli_fname, ec);
  return ec ? std::string() : self.parent_path().string();
}

std::vector<std::string> splitFolders(std::string_view list) {
  std::vector<std::string> out;
  while (!list.empty()) {
    const auto colon = list.find(':');
    const auto part = list.substr(0, colon);
    if (!part.empty()) out.emplace_back(part);
    if (colon == std::string_view::npos) break;
    list.remove_prefix(colon + 1);
  }
  return out;
}

Status problem(PluginProblem kind, PluginProblem* out, std::string message) {
  if (out) *out = kind;
  return Status::usage(std::move(message));
}

}  // namespace

std::string backendPluginFile(const std::string& backend) { return "reservoir-backend-" + backend + ".so"; }

std::vector<std::string> pluginDirectories() {
  if (const char* env = std::getenv("RESERVOIR_PLUGIN_DIR"); env != nullptr && *env != '\0') return splitFolders(env);
  std::vector<std::string> dirs;
  const std::string here = folderOfThisCode();
  if (!here.empty()) {
    dirs.push_back(here);
    dirs.push_back((fs::path(here) / RESERVOIR_PLUGIN_DIR_FROM_BIN).lexically_normal().string());
  }
  return dirs;
}

const char* pluginBuildIdentity() { return "reservoir " RESERVOIR_VERSION " (" __VERSION__ ")"; }

Expected<LoadedPlugin> loadPlugin(const std::string& file_name, const char* symbol, bool global,
                                  PluginProblem* problem_out) {
  if (problem_out) *problem_out = PluginProblem::kNone;
  const auto dirs = pluginDirectories();
  std::string path;
  for (const auto& d : dirs) {
    std::error_code ec;
    const fs::path candidate = fs::path(d) / file_name;
    if (fs::is_regular_file(candidate, ec)) {
      path = candidate.string();
      break;
    }
  }
  if (path.empty())
    return problem(PluginProblem::kNotFound, problem_out,
                   fmt::format("{} is not installed (looked in {})", file_name,
                               dirs.empty() ? std::string("no folder") : fmt::format("{}", fmt::join(dirs, ", "))));
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
  if (handle == nullptr) {
    const char* why = dlerror();
    return problem(PluginProblem::kCannotLoad, problem_out,
                   fmt::format("{} cannot be loaded: {}", path, why ? why : "unknown reason"));
  }
  using Identity = const char* (*)();
  auto identity = reinterpret_cast<Identity>(dlsym(handle, kPluginBuildSymbol));
  if (identity == nullptr || std::strcmp(identity(), pluginBuildIdentity()) != 0)
    return problem(PluginProblem::kWrongBuild, problem_out,
                   fmt::format("{} was made by another build ({}), not by this {}", path,
                               identity ? identity() : "no build identity", pluginBuildIdentity()));
  void* entry = dlsym(handle, symbol);
  if (entry == nullptr)
    return problem(PluginProblem::kWrongBuild, problem_out, fmt::format("{} has no entry point {}", path, symbol));
  return LoadedPlugin{entry, path};
}

}  // namespace reservoir::replay
