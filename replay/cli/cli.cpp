#include "cli.h"

#include <CLI/CLI.hpp>

#include <ostream>

#include "commands.h"

namespace reservoir::cli {

int fail(std::ostream& err, const std::string& message) {
  err << "reservoir: " << message << "\n";
  return kInputError;
}

int runCli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"Reservoir: what PyTorch's CUDA caching allocator reserves, and where cleanup belongs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "reservoir 0.1.0");
  int result = kOk;
  auto set = [&result](int r) { result = r; };
  for (Register reg : {&registerInfo, &registerCheck, &registerWhatIf, &registerSweep, &registerGate, &registerExport,
                       &registerReplay})
    reg(app, set, out, err);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return kOk;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return kOk;
  } catch (const CLI::CallForVersion&) {
    out << "reservoir 0.1.0\n";
    return kOk;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      out << e.what() << "\n";
      return kOk;
    }
    err << "reservoir: " << e.what() << "\n";
    if (!app.get_subcommands().empty())
      err << "run 'reservoir " << app.get_subcommands().front()->get_name() << " --help'\n";
    else
      err << "run 'reservoir --help'\n";
    return kUsage;
  }
  return result;
}

}  // namespace reservoir::cli
