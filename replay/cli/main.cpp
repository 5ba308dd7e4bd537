#include <iostream>

#include "cli.h"
#ifdef RESERVOIR_WITH_MPI
#include "mpi_driver.h"
#endif

int main(int argc, char** argv) {
#ifdef RESERVOIR_WITH_MPI
  // MPI only when a launcher started this process: a plain run pays nothing for it.
  if (reservoir::mpi::launchedByMpiLauncher()) return reservoir::mpi::runUnderMpi(argc, argv);
#endif
  return reservoir::cli::runCli(argc, argv, std::cout, std::cerr);
}
