#include <iostream>

#include "cli.h"
#include "mpi_launch.h"

int main(int argc, char** argv) {
  // MPI only when a launcher started this process (the driver is a plugin: mpi_launch.h).
  if (reservoir::cli::launchedByMpiLauncher()) return reservoir::cli::runUnderMpiLauncher(argc, argv, std::cerr);
  return reservoir::cli::runCli(argc, argv, std::cout, std::cerr);
}
