#include "mpi_launch.h"

#include <cstdlib>

#include "cli.h"
#include "reservoir/replay/plugins.h"

namespace reservoir::cli {
namespace {

bool set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
}

}  // namespace

bool launchedByMpiLauncher() {
  if (set("RESERVOIR_NO_MPI")) return false;
  return set("OMPI_COMM_WORLD_SIZE") || set("PMIX_RANK") || set("PMI_SIZE") || set("PMI_RANK") ||
         (set("SLURM_STEP_NUM_TASKS") && set("SLURM_PROCID"));
}

int runUnderMpiLauncher(int argc, char** argv, std::ostream& err) {
  // Global: OpenMPI's own components, which it loads later, need libmpi's symbols.
  auto plugin = replay::loadPlugin(replay::kMpiPluginFile, replay::kMpiPluginEntry, /*global=*/true);
  if (!plugin) {
    err << "reservoir: an MPI launcher started this process, but the MPI driver cannot run here: " << plugin.message()
        << ". Install OpenMPI (Debian: libopenmpi3), or set RESERVOIR_NO_MPI=1 to run each process on its own\n";
    return kUsage;
  }
  using Run = int (*)(int, char**);
  return reinterpret_cast<Run>(plugin->symbol)(argc, argv);
}

}  // namespace reservoir::cli
