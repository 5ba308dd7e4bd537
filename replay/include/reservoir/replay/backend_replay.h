// The job behind `reservoir replay`: a prepared trace's program (edited as in what-if) run by the
// model, then by each backend asked for, each run compared with the model's prediction; the
// real allocator's own recording (torch) replayed through the model; and, for the cuda backend
// with edits, the unedited program's run that prices the edits in driver time. Front ends print
// the report (the CLI: replay/cli/cmd_replay.cpp).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reservoir/replay/backend.h"
#include "reservoir/replay/conformance.h"
#include "reservoir/replay/edited_program.h"
#include "reservoir/replay/edited_run.h"
#include "reservoir/replay/whatif.h"

namespace reservoir::replay {

// The edited run as `reservoir whatif` chooses it (chooseEditedRun: settings, fraction, the
// memory the cache may use and where that figure comes from), with what a GPU backend also
// needs: the capacity and overhead as given, and the address model.
struct EditedRunChoice : EditedRun {
  std::optional<sim::ByteCount> given_capacity;  // --capacity as given (the GPU backends hold the rest back)
  sim::ByteCount overhead = 0;
  AddressModel address_model = AddressModel::kAnchored;
};

// chooseEditedRun for the whatif options, plus the capacity, overhead and address model as given.
Expected<EditedRunChoice> chooseEditedRunAsWhatIf(const PreparedTrace& prepared, const WhatIfOptions& options);

struct BackendReplayOptions {
  bool touch_memory = true;  // cuda: write every new segment / page
  bool track_peaks = true;   // torch: read the statistics after every op
  bool baseline = true;      // cuda with edits: also run the unedited program (the time price)
  // Progress of each stage: "model", then "<backend> replay" (its baseline run reports as it).
  std::function<void(const std::string& stage, std::size_t done, std::size_t total)> progress;
  const std::atomic<bool>* cancel = nullptr;  // set (e.g. on SIGINT) to stop between ops
  // Called with a real allocator's own recording (result.snapshot_bytes) as soon as it exists.
  std::function<void(const BackendResult& result, const EditedProgram& program)> on_recording;
};

struct BackendRun {
  std::string name;
  BackendResult result;
  BackendComparison vs_model;
  std::optional<ConformanceReport> own_recording;  // torch: the model on the real allocator's trace
  std::optional<BackendResult> baseline;           // cuda with edits: the unedited program's run
};

struct BackendReplayReport {
  EditedProgram program;  // the edited program every backend ran
  BackendResult model;    // the model's prediction
  std::vector<BackendRun> runs;
  // Every run's figures equal the prediction, and the model reproduces each real run's own recording.
  bool exact = true;
};

// Runs the job. `backends` named "model" are skipped (the prediction is always made). Errors: a
// backend that cannot run, a run that was interrupted (job.cancel), settings that do not parse.
Expected<BackendReplayReport> runBackendReplay(const PreparedTrace& prepared, const std::vector<ResolvedEdit>& edits,
                                               const EditedRunChoice& run,
                                               const std::vector<std::unique_ptr<ReplayBackend>>& backends,
                                               const BackendReplayOptions& options);

}  // namespace reservoir::replay
