#include "edit_options.h"

#include "common.h"
#include "reservoir/replay/point_help.h"

namespace reservoir::cli {

void addEditedRunFlags(CLI::App* app, EditedRunFlags* f) {
  // A callback, not a string: `--set ''` is given (torch's defaults), not the same as no --set.
  app->add_option_function<std::string>(
      "--set", [f](const std::string& text) { f->set = text; },
      "allocator settings for the edited run, replacing the recorded PYTORCH_CUDA_ALLOC_CONF as a whole as the "
      "environment variable does ('' is torch's defaults; default: the recorded ones)");
  app->add_option("--capacity", f->capacity,
                  "the edited run's device memory, e.g. 141GiB (default: from recorded ooms, else unlimited)");
  app->add_option("--overhead", f->overhead,
                  "the edited run's memory outside the PyTorch cache (CUDA context, NCCL, cuBLAS), e.g. 2GiB");
  app->add_option("--fraction", f->fraction, "the edited run's memory fraction (default: the recorded one)")
      ->check(fractionCheck());
}

Expected<replay::EditedRunOptions> makeEditedRunOptions(const EditedRunFlags& f) {
  return replay::parseEditedRunOptions(f, cliWording());
}

void addEditOptions(CLI::App* app, EditOptions* o) {
  app->add_option("--cleanup", o->cleanup, "torch.cuda.empty_cache() at POINT (repeatable)");
  app->add_option("--release", o->release, "free the live tensors allocated under SELECTOR at POINT: SELECTOR@POINT");
  app->add_option("--probe", o->probe, "report reserved/allocated/active at POINT (repeatable)");
  app->add_option("--demand", o->demand, "another process needs BYTES at POINT: BYTES@POINT (repeatable)");
  app->add_option("--reset-peaks", o->reset_peaks, "torch.cuda.reset_peak_memory_stats() at POINT");
  app->footer(std::string(replay::pointSyntaxHelp()));  // a command's own footer, set after, replaces it
  addEditedRunFlags(app, &o->device);
  app->add_option("--address-model", o->address_model,
                  "anchored (default: the recorded addresses until the run departs from the recording's segments, "
                  "the driver's from there), recorded or driver")
      ->check(CLI::IsMember({"anchored", "recorded", "driver"}));
}

Expected<replay::WhatIfOptions> makeWhatIfOptions(const EditOptions& o) {
  return replay::parseWhatIfOptions(o, cliWording());
}

}  // namespace reservoir::cli
