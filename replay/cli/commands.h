// Registration of each subcommand (one file each).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <ostream>
#include <string>

#include "cli.h"

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
void registerScale(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err);

// Prints "reservoir: <message>" and returns kInputError.
int fail(std::ostream& err, const std::string& message);

}  // namespace reservoir::cli
