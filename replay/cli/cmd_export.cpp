// reservoir export TRACE --out FILE.pickle: the modelled run as a snapshot memory_viz opens.
#include <fmt/format.h>

#include <array>
#include <csignal>

#include "commands.h"
#include "common.h"
#include "edit_options.h"
#include "reservoir/replay/export.h"
#include "reservoir/traces/writer.h"

namespace reservoir::cli {
namespace {

struct ExportArgs {
  std::string trace;
  std::optional<std::int64_t> device;
  std::string out, csv;
  EnvOptions env;
  EditOptions edits;
};

// While an export runs, a signal that ends the process (SIGINT, SIGTERM, SIGHUP, ...) first
// removes the temporary files (X.tmp) the writer has open, then ends it as the signal would have.
class TempFilesOnSignal {
 public:
  TempFilesOnSignal() {
    for (std::size_t i = 0; i < kSignals.size(); ++i) old_[i] = std::signal(kSignals[i], onSignal);
  }
  ~TempFilesOnSignal() {
    for (std::size_t i = 0; i < kSignals.size(); ++i) std::signal(kSignals[i], old_[i]);
  }
  TempFilesOnSignal(const TempFilesOnSignal&) = delete;
  TempFilesOnSignal& operator=(const TempFilesOnSignal&) = delete;

 private:
  static constexpr std::array<int, 9> kSignals{SIGINT,  SIGTERM, SIGHUP,  SIGQUIT, SIGUSR1,
                                               SIGUSR2, SIGALRM, SIGXFSZ, SIGPIPE};
  static void onSignal(int sig) {  // async-signal-safe: unlink, signal, raise
    traces::removeTemporaryFilesNow();
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
  std::array<void (*)(int), kSignals.size()> old_{};
};

int runExport(const ExportArgs& a, std::ostream& out, std::ostream& err) {
  if (a.out.empty() && a.csv.empty()) return usage(err, "give --out FILE.pickle and/or --csv FILE.csv");
  if (Status st = replay::checkExportTargets(a.trace, {{"--out", a.out}, {"--csv", a.csv}}); !st.ok())
    return fail(err, st);
  const TempFilesOnSignal cleanup;
  auto w = makeWhatIfOptions(a.edits);
  if (!w) return usage(err, w.message());
  auto opened = openTrace(a.trace, a.device, a.env, err);
  if (!opened) return fail(err, opened.status());
  // No history: no modelled run to write. Said, and nothing written (a file of 0 events and 0
  // segments claimed as the export lost the snapshot's segments).
  if (opened->nothing_to_replay) return fail(err, *opened->nothing_to_replay + "; nothing written");
  const replay::Trace& trace = opened->trace;
  const std::size_t dev = opened->device;
  auto prepared = replay::prepareTrace(trace.snapshot, dev, replay::editedRunEnvironment(opened->env, *w));
  if (!prepared) return fail(err, a.trace + ": " + prepared.message());
  auto edits = replay::resolveEdits(*prepared, w->edits);
  if (!edits) return fail(err, edits.status());
  auto counts = replay::writeEditedRun(*prepared, *edits, *w, a.out, a.csv);
  if (!counts) return fail(err, counts.status());
  if (!a.out.empty())
    out << fmt::format("wrote {} ({} events, {} segments): open it in https://pytorch.org/memory_viz\n", a.out,
                       counts->events, counts->segments);
  if (!a.csv.empty()) out << fmt::format("wrote {} ({} rows)\n", a.csv, counts->rows);
  return kOk;
}

}  // namespace

void registerExport(CLI::App& app, std::function<void(int)> set_result, std::ostream& out, std::ostream& err) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand("export", "Write the modelled (edited) run as a snapshot or CSV timeline");
  cmd->add_option("trace", args->trace, "snapshot pickle")->required();
  cmd->add_option("--out", args->out, "snapshot to write (protocol 4; opens in PyTorch's memory_viz)");
  cmd->add_option("--csv", args->csv, "CSV timeline to write (event, time_us, allocated, reserved, active, requested)");
  cmd->add_option("--device", args->device, "CUDA device number");
  cmd->add_flag("--no-capture-json", args->env.no_capture_json, "ignore X.json beside X.pickle");
  addEditOptions(cmd, &args->edits);
  cmd->callback([args, set_result, &out, &err] { set_result(runExport(*args, out, err)); });
}

}  // namespace reservoir::cli
