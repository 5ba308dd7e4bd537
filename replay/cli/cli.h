// The `reservoir` command line: subcommands over the replay library. main() only calls runCli,
// so every entry point can be tested in-process.
#pragma once

#include <functional>
#include <iosfwd>

namespace reservoir::cli {

// Exit codes shared by all subcommands.
enum ExitCode : int {
  kOk = 0,
  kFailed = 1,      // the answer is "no": divergence, over budget, OOM predicted (gate)
  kUsage = 2,       // bad command line
  kInputError = 3,  // unreadable or invalid input
  kInternal = 70,   // a fault of this program (EX_SOFTWARE); never an abort
};

int runCli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

// True when the command line's command spreads its items over the work pool's processes
// (check, whatif, gate, sweep, scale grids); the other commands run on rank 0 alone in an MPI job.
bool spreadsWork(int argc, const char* const* argv);

// Runs `body`, turning whatever escapes it into one line on `err` and an exit code: running out
// of memory is an input problem (kInputError: the input needs more than there is), anything else
// an internal error (kInternal). runCli runs every command this way, so none ends in an abort.
int runGuarded(std::ostream& err, const std::function<int()>& body);

}  // namespace reservoir::cli
