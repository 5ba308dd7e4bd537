// Parts of reservoir that load at run time (dlopen), because what they need may be missing on
// the user's machine: the GPU replay backends (reservoir-backend-cuda.so needs the CUDA runtime,
// reservoir-backend-torch.so LibTorch) and the MPI driver (reservoir-mpi.so, OpenMPI). The
// reservoir binary and the Python module start without any of them; a command that needs one
// says what is missing (docs/install.md).
#pragma once

#include <string>
#include <vector>

#include "reservoir/core/status.h"

namespace reservoir::replay {

// The plugins' file names.
std::string backendPluginFile(const std::string& backend);  // "reservoir-backend-NAME.so"
inline constexpr const char* kMpiPluginFile = "reservoir-mpi.so";
// Their entry points: a backend plugin's `ReplayBackend* reservoir_make_backend()` (a new
// backend, owned by the caller); the MPI driver's `int reservoir_run_under_mpi(int, char**)`.
inline constexpr const char* kBackendPluginEntry = "reservoir_make_backend";
inline constexpr const char* kMpiPluginEntry = "reservoir_run_under_mpi";

// Where plugins are looked for, in order: the folders of $RESERVOIR_PLUGIN_DIR (':'-separated)
// when it is set; else the folder of the binary or module that holds this library, and the
// installed plugin folder relative to it (bin/../lib/reservoir).
std::vector<std::string> pluginDirectories();

enum class PluginProblem {
  kNone,
  kNotFound,    // no such file in any plugin folder: this build or install has no such part
  kCannotLoad,  // the file is there, but what it needs is not (dlopen's reason), or it is damaged
  kWrongBuild,  // made by another build of reservoir (another version or compiler)
};

struct LoadedPlugin {
  void* symbol = nullptr;  // the entry point asked for
  std::string file;        // the plugin's path
};

// Loads `file_name` from the first plugin folder that has it and returns `symbol` from it. A
// plugin stays loaded until the process ends. `global`: its libraries' symbols are made visible
// to libraries they load later (OpenMPI's components need it). A failure is a usage-class
// Status whose message says, in plain words, which part is missing and why; `problem` says which
// kind (for callers that word it their own way).
Expected<LoadedPlugin> loadPlugin(const std::string& file_name, const char* symbol, bool global = false,
                                  PluginProblem* problem = nullptr);

// What every plugin exports (its build identity), checked by loadPlugin before the entry point.
inline constexpr const char* kPluginBuildSymbol = "reservoir_plugin_build";
// This build's identity: reservoir's version and the compiler that made it.
const char* pluginBuildIdentity();

}  // namespace reservoir::replay
