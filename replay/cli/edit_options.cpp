#include "edit_options.h"

#include <fmt/format.h>

#include "common.h"
#include "reservoir/simulator/sizes.h"

namespace reservoir::cli {

void addEditedRunFlags(CLI::App* app, EditedRunFlags* f) {
  app->add_option("--set", f->set,
                  "allocator settings for the edited run (PYTORCH_CUDA_ALLOC_CONF syntax; default: the recorded ones)");
  app->add_option("--capacity", f->capacity,
                  "the edited run's device memory, e.g. 141GiB (default: from recorded ooms, else unlimited)");
  app->add_option("--overhead", f->overhead,
                  "the edited run's memory outside the PyTorch cache (CUDA context, NCCL, cuBLAS), e.g. 2GiB");
  app->add_option("--fraction", f->fraction, "the edited run's memory fraction (default: the recorded one)")
      ->check(fractionCheck());
}

Expected<replay::EditedRunOptions> makeEditedRunOptions(const EditedRunFlags& f) {
  replay::EditedRunOptions o;
  if (!f.set.empty()) {
    auto cfg = sim::parseAllocConf(f.set);
    if (!cfg) return Status::error("--set '" + f.set + "': " + cfg.message());
    o.settings = std::move(*cfg);
  }
  if (!f.capacity.empty()) {
    auto c = sim::parseSize(f.capacity);
    if (!c) return Status::error("--capacity: not a size: '" + f.capacity + "'");
    o.capacity = *c;
  }
  if (!f.overhead.empty()) {
    auto c = sim::parseSize(f.overhead);
    if (!c) return Status::error("--overhead: not a size: '" + f.overhead + "'");
    o.overhead = *c;
  }
  if (o.capacity && o.overhead >= *o.capacity)
    return Status::usage(
        fmt::format("--overhead {} is not below --capacity {}: the edited run would have no memory "
                    "for PyTorch's cache",
                    f.overhead, f.capacity));
  o.fraction = f.fraction;
  return o;
}

void addEditOptions(CLI::App* app, EditOptions* o) {
  app->add_option("--cleanup", o->cleanup, "torch.cuda.empty_cache() at POINT (repeatable)");
  app->add_option("--release", o->release, "free the live tensors allocated under SELECTOR at POINT: SELECTOR@POINT");
  app->add_option("--probe", o->probe, "report reserved/allocated/active at POINT (repeatable)");
  app->add_option("--demand", o->demand, "another process needs BYTES at POINT: BYTES@POINT (repeatable)");
  app->add_option("--reset-peaks", o->reset_peaks, "torch.cuda.reset_peak_memory_stats() at POINT");
  addEditedRunFlags(app, &o->device);
  app->add_option("--address-model", o->address_model, "recorded (default) or driver")
      ->check(CLI::IsMember({"recorded", "driver"}));
}

Expected<replay::WhatIfOptions> makeWhatIfOptions(const EditOptions& o) {
  auto device = makeEditedRunOptions(o.device);
  if (!device) return device.status();
  replay::WhatIfOptions w;
  static_cast<replay::EditedRunOptions&>(w) = std::move(*device);
  // Each flag is an edit kind of the same name; the library parses it, the flag names the error.
  using Kind = replay::Edit::Kind;
  const std::pair<Kind, const std::vector<std::string>*> flags[] = {
      {Kind::kCleanup, &o.cleanup}, {Kind::kRelease, &o.release},        {Kind::kProbe, &o.probe},
      {Kind::kDemand, &o.demand},   {Kind::kResetPeaks, &o.reset_peaks},
  };
  for (const auto& [kind, texts] : flags)
    for (const auto& t : *texts) {
      auto e = replay::parseEdit(kind, t);
      if (!e) return Status::error(fmt::format("--{}: {}", replay::editKindName(kind), e.message()));
      w.edits.push_back(std::move(*e));
    }
  w.address_model = o.address_model == "driver" ? replay::AddressModel::kDriver : replay::AddressModel::kRecorded;
  return w;
}

}  // namespace reservoir::cli
