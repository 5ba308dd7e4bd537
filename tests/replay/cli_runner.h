// Runs the reservoir CLI in-process, capturing its exit code, stdout and stderr.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "cli.h"

namespace reservoir::test {

struct CliResult {
  int code;
  std::string out, err;
};

inline CliResult runReservoir(std::vector<std::string> args) {
  args.insert(args.begin(), "reservoir");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = cli::runCli(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

}  // namespace reservoir::test
