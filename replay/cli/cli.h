// The `reservoir` command line: subcommands over the replay library. main() only calls runCli,
// so every entry point can be tested in-process.
#pragma once

#include <iosfwd>

namespace reservoir::cli {

// Exit codes shared by all subcommands.
enum ExitCode : int {
  kOk = 0,
  kFailed = 1,      // the answer is "no": divergence, over budget, OOM predicted (gate)
  kUsage = 2,       // bad command line
  kInputError = 3,  // unreadable or invalid input
};

int runCli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace reservoir::cli
