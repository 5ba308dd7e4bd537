#include "edit_options.h"

#include "reservoir/simulator/sizes.h"

namespace reservoir::cli {

void addEditOptions(CLI::App* app, EditOptions* o) {
  app->add_option("--cleanup", o->cleanup, "torch.cuda.empty_cache() at POINT (repeatable)");
  app->add_option("--release", o->release, "free the live tensors allocated under SELECTOR at POINT: SELECTOR@POINT");
  app->add_option("--probe", o->probe, "report reserved/allocated/active at POINT (repeatable)");
  app->add_option("--demand", o->demand, "another process needs BYTES at POINT: BYTES@POINT (repeatable)");
  app->add_option("--reset-peaks", o->reset_peaks, "torch.cuda.reset_peak_memory_stats() at POINT");
  app->add_option("--set", o->set, "allocator settings for the edited run (PYTORCH_CUDA_ALLOC_CONF syntax)");
  app->add_option("--capacity", o->capacity,
                  "device memory, e.g. 141GiB (default: from recorded ooms, else unlimited)");
  app->add_option("--overhead", o->overhead,
                  "memory outside the PyTorch cache (CUDA context, NCCL, cuBLAS), e.g. 2GiB");
  app->add_option("--fraction", o->fraction, "memory fraction for the edited run")->check(CLI::Range(0.0, 1.0));
  app->add_option("--address-model", o->address_model, "recorded (default) or driver")
      ->check(CLI::IsMember({"recorded", "driver"}));
}

Expected<replay::WhatIfOptions> makeWhatIfOptions(const EditOptions& o) {
  replay::WhatIfOptions w;
  auto add = [&](const std::vector<std::string>& texts, auto parse) -> Status {
    for (const auto& t : texts) {
      auto e = parse(t);
      if (!e) return e.status();
      w.edits.push_back(*e);
    }
    return {};
  };
  if (Status st = add(o.cleanup, replay::parseCleanup); !st.ok()) return Status::error("--cleanup: " + st.message());
  if (Status st = add(o.release, replay::parseRelease); !st.ok()) return st;
  if (Status st = add(o.probe, replay::parseProbe); !st.ok()) return Status::error("--probe: " + st.message());
  if (Status st = add(o.demand, replay::parseDemand); !st.ok()) return st;
  if (Status st = add(o.reset_peaks, replay::parseResetPeaks); !st.ok())
    return Status::error("--reset-peaks: " + st.message());
  if (!o.set.empty()) {
    auto cfg = sim::parseAllocConf(o.set);
    if (!cfg) return Status::error("--set '" + o.set + "': " + cfg.message());
    w.settings = o.set;
  }
  if (!o.capacity.empty()) {
    auto c = sim::parseSize(o.capacity);
    if (!c) return Status::error("--capacity: not a size: '" + o.capacity + "'");
    w.capacity = *c;
  }
  if (!o.overhead.empty()) {
    auto c = sim::parseSize(o.overhead);
    if (!c) return Status::error("--overhead: not a size: '" + o.overhead + "'");
    w.overhead = *c;
  }
  w.fraction = o.fraction;
  w.address_model = o.address_model == "driver" ? replay::AddressModel::kDriver : replay::AddressModel::kRecorded;
  return w;
}

}  // namespace reservoir::cli
