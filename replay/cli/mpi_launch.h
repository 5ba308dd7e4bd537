// The reservoir binary under mpirun or srun: it hands the command over to the MPI driver, a
// plugin (replay/mpi/, reservoir-mpi.so) loaded only then, so that the binary starts on machines
// without OpenMPI and a plain run pays nothing for MPI.
#pragma once

#include <ostream>

namespace reservoir::cli {

// True when mpirun (OpenMPI), a PMI/PMIx launcher or Slurm's srun started this process, and
// RESERVOIR_NO_MPI is not set.
bool launchedByMpiLauncher();

// Runs the command through the MPI driver plugin. When the plugin is missing or cannot load
// (no OpenMPI on this machine), says so on `err` and returns the usage exit code: running the
// whole command in every process of the job instead would print it once per process.
int runUnderMpiLauncher(int argc, char** argv, std::ostream& err);

}  // namespace reservoir::cli
