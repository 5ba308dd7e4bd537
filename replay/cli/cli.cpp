#include "cli.h"

#include <CLI/CLI.hpp>

#include <exception>
#include <new>
#include <ostream>
#include <string_view>
#include <system_error>
#include <vector>

#include "checked_output.h"
#include "commands.h"
#include "reservoir/core/version.h"
#include "reservoir/replay/option_text.h"

namespace reservoir::cli {
namespace {

std::vector<const CLI::App*> commands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

std::string commandList(const CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : commands(app)) names += (names.empty() ? "" : ", ") + sub->get_name();
  return names;
}

bool isCommand(const CLI::App& app, std::string_view name) {
  for (const CLI::App* sub : commands(app))
    if (sub->check_name(std::string(name))) return true;
  return false;
}

// The first argument that is not an option names the command; nullptr when there is none.
const char* commandArgument(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-') return argv[i];
  return nullptr;
}

int parseAndRun(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"Reservoir: what PyTorch's CUDA caching allocator reserves, and where cleanup belongs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "reservoir " RESERVOIR_VERSION);
  int result = kOk;
  auto set = [&result](int r) { result = r; };
  for (Register reg : {&registerInfo, &registerCheck, &registerWhatIf, &registerSweep, &registerGate, &registerExport,
                       &registerReplay, &registerScale, &registerReport})
    reg(app, set, out, err);
  const char* command = commandArgument(argc, argv);
  if (command && !isCommand(app, command)) {
    err << "reservoir: unknown command '" << command << "'; commands: " << commandList(app) << "\n";
    return kUsage;
  }
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
    if (!command) {
      err << "reservoir: no command given; commands: " << commandList(app) << " (run 'reservoir --help')\n";
      return kUsage;
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

}  // namespace

int fail(std::ostream& err, const std::string& message) {
  err << "reservoir: " << message << "\n";
  return kInputError;
}

int fail(std::ostream& err, const Status& status, const std::string& prefix) {
  err << "reservoir: " << prefix << status.message() << "\n";
  return status.isUsage() ? kUsage : kInputError;
}

int usage(std::ostream& err, const std::string& message) {
  err << "reservoir: " << message << "\n";
  return kUsage;
}

int runGuarded(std::ostream& err, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    err << "reservoir: out of memory: the input needs more memory than this machine gives "
           "(a damaged or hostile file?)\n";
    return kInputError;
  } catch (const std::system_error& e) {
    err << "reservoir: internal error: system call failed: " << e.what() << "\n";
  } catch (const std::exception& e) {
    err << "reservoir: internal error: " << e.what() << "\n";
  } catch (...) {
    err << "reservoir: internal error: an unknown exception\n";
  }
  return kInternal;
}

bool spreadsWork(int argc, const char* const* argv) {
  const char* command = commandArgument(argc, argv);
  if (!command) return false;
  const std::string_view c(command);
  return c == "check" || c == "whatif" || c == "gate" || c == "sweep" || c == "scale";
}

int runCli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  // Every command writes through `checked`: a report that does not reach `out` is an error.
  CheckedOutput checked(out.rdbuf());
  std::ostream checked_out(&checked);
  const int code = runGuarded(err, [&] {
    if (Status st = replay::applyMemoryCapFromEnvironment(); !st.ok()) return fail(err, st);
    replay::applySnapshotCacheFromEnvironment();
    return parseAndRun(argc, argv, checked_out, err);
  });
  return finishOutput(checked, err, code);
}

}  // namespace reservoir::cli
