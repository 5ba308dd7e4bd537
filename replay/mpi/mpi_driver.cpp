#include "mpi_driver.h"

#include <mpi.h>
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <ostream>
#include <streambuf>

#include "cli.h"
#include "mpi_pool.h"

namespace reservoir::mpi {
namespace {

volatile std::sig_atomic_t g_rank = 0;

// Async-signal-safe: one line from rank 0, then the process ends (no MPI call, no destructor:
// the launcher sees every process end and tears the job down).
extern "C" void onSignal(int sig) {
  if (g_rank == 0) {
    static const char msg[] = "reservoir: interrupted; every process of the job stops\n";
    [[maybe_unused]] auto n = ::write(2, msg, sizeof msg - 1);
  }
  ::_exit(128 + sig);
}

void installSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

class NullBuffer : public std::streambuf {
 protected:
  int overflow(int c) override { return c == traits_type::eof() ? 0 : c; }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

}  // namespace

int runUnderMpi(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    MpiPool pool(MPI_COMM_WORLD);
    g_rank = pool.rank();
    installSignalHandlers();
    cli::installWorkPool(&pool);
    int code = 0;
    if (pool.root()) {
      code = cli::runCli(argc, argv, std::cout, std::cerr);
      std::cout.flush();
    } else if (cli::spreadsWork(argc, argv)) {
      // The other processes run the same command for their items; what they would print is
      // rank 0's to print.
      NullBuffer null;
      std::ostream sink(&null);
      code = cli::runCli(argc, argv, sink, sink);
    }
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
    cli::installWorkPool(nullptr);
    MPI_Finalize();
    return code;
  }
}

}  // namespace reservoir::mpi
