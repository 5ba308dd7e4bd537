// The MPI driver, built as the plugin reservoir-mpi.so (mpi_plugin.cpp): the `reservoir` binary
// under mpirun or srun hands over to it when a launcher started the process
// (replay/cli/mpi_launch.h), so the binary itself needs no MPI library to start. It installs an
// MpiPool as the CLI's work pool, and runs the same command line on every process; the commands that spread work
// (check, whatif, gate, sweep over several traces) hand their items to the pool, which runs
// each on one process and gathers the results (bytes) on rank 0, the only one that prints.
// The replay library knows nothing of MPI; this folder is the only code that calls it.
#pragma once

namespace reservoir::mpi {

// MPI_Init, the pool, the command on every process (output on rank 0 only), rank 0's exit code
// on every process, MPI_Finalize. SIGINT/SIGTERM (Ctrl-C, or the launcher ending the job) end
// each process at once with 128 + the signal's number.
int runUnderMpi(int argc, char** argv);

}  // namespace reservoir::mpi
