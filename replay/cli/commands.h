// Registration of each subcommand (one file each).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <ostream>
#include <string>

#include "cli.h"
#include "reservoir/core/status.h"

namespace reservoir::cli {

using Register = void (*)(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err);

void registerCheck(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err);
void registerWhatIf(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err);
void registerSweep(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err);
void registerGate(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err);
void registerExport(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err);
void registerInfo(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err);
void registerReplay(CLI::App& app, std::function<void(int)> set_result, std::ostream& out,
                    std::ostream& err);  // replay + synth
void registerReport(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err);
void registerScale(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err);

// Prints "reservoir: <message>" and returns kInputError.
int fail(std::ostream& err, const std::string& message);
// Prints "reservoir: <prefix><message>" and returns kUsage for a usage error (Status::usage), else
// kInputError.
int fail(std::ostream& err, const Status& status, const std::string& prefix = "");
// Prints "reservoir: <message>" and returns kUsage (a flag value that cannot be used).
int usage(std::ostream& err, const std::string& message);

}  // namespace reservoir::cli
