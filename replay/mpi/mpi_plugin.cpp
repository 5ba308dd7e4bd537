// The entry points of the MPI driver plugin, reservoir-mpi.so (replay/plugins.h): the reservoir
// binary loads it when an MPI launcher started the process (replay/cli/mpi_launch.h).
#include "mpi_driver.h"
#include "reservoir/replay/plugins.h"

#define RESERVOIR_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))

RESERVOIR_PLUGIN_EXPORT const char* reservoir_plugin_build() { return reservoir::replay::pluginBuildIdentity(); }

RESERVOIR_PLUGIN_EXPORT int reservoir_run_under_mpi(int argc, char** argv) {
  return reservoir::mpi::runUnderMpi(argc, argv);
}
