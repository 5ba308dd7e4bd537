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
// Set once every process knows the command's exit code: a signal after that (mpirun ends the
// job's other processes as soon as one exits with a code that is not 0) interrupts nothing.
volatile std::sig_atomic_t g_finished = 0;
volatile std::sig_atomic_t g_code = 0;

// Async-signal-safe: one line from rank 0, then the process ends (no MPI call, no destructor:
// the launcher sees every process end and tears the job down). After the command has finished,
// the process ends quietly with the command's own exit code.
extern "C" void onSignal(int sig) {
  if (g_finished) ::_exit(g_code);
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
      code = cli::runCli(argc, argv, std::cout, std::cerr);  // flushes and checks stdout
    } else if (cli::spreadsWork(argc, argv)) {
      // The other processes run the same command for their items; what they would print is
      // rank 0's to print.
      NullBuffer null;
      std::ostream sink(&null);
      code = cli::runCli(argc, argv, sink, sink);
    }
    if (pool.root()) {  // rank 0 knows the code before any other process can exit with it
      g_code = code;
      g_finished = 1;
    }
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
    g_code = code;
    g_finished = 1;
    cli::installWorkPool(nullptr);
    MPI_Finalize();
    return code;
  }
}

}  // namespace reservoir::mpi
