// The MPI driver: the `reservoir` binary under mpirun or srun. It initialises MPI only when a
// launcher started the process (no start-up cost otherwise), installs an MpiPool as the CLI's
// work pool, and runs the same command line on every process; the commands that spread work
// (check, whatif, gate, sweep over several traces) hand their items to the pool, which runs
// each on one process and gathers the results (bytes) on rank 0, the only one that prints.
// The replay library knows nothing of MPI; this folder is the only code that calls it.
#pragma once

namespace reservoir::mpi {

// True when mpirun (OpenMPI), a PMI/PMIx launcher or Slurm's srun started this process, and
// RESERVOIR_NO_MPI is not set.
bool launchedByMpiLauncher();

// MPI_Init, the pool, the command on every process (output on rank 0 only), rank 0's exit code
// on every process, MPI_Finalize. SIGINT/SIGTERM (Ctrl-C, or the launcher ending the job) end
// each process at once with 128 + the signal's number.
int runUnderMpi(int argc, char** argv);

}  // namespace reservoir::mpi
