// libFuzzer target, structure-aware: the model and the what-if engine on well-formed snapshots.
//
// The input is not a pickle but a recipe. Its first bytes choose a synthetic workload (the
// model records it: a well-formed trace with segments, two streams, record_stream frees and
// empty_cache calls), the next ones mutate that trace the way a damaged or unusual recording
// would (sizes, addresses, streams, actions, times, deleted / duplicated / swapped entries,
// the recorded settings), and the rest pick what-if edits, a capacity and a fraction. The
// mutated snapshot goes through the writer and the reader (so the reader's validation applies,
// as for a file), then through prepareTrace, runWhatIf and a small runSweep. Errors are fine;
// a crash, a sanitizer report, a hang or an out-of-memory is a finding. The recipe is read with
// RecipeBytes (recipe_bytes.h), so the same file also builds into the corpus replay the tests run.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "recipe_bytes.h"
#include "reservoir/replay/backend.h"
#include "reservoir/replay/sweep.h"
#include "reservoir/replay/whatif.h"
#include "reservoir/traces/reader.h"
#include "reservoir/traces/writer.h"

namespace {

using reservoir::fuzz::RecipeBytes;
using reservoir::replay::Edit;
using reservoir::traces::Action;
using reservoir::traces::Snapshot;
using reservoir::traces::TraceEvent;

constexpr const char* kSettings[] = {"",
                                     "expandable_segments:True",
                                     "max_split_size_mb:64",
                                     "roundup_power2_divisions:4",
                                     "garbage_collection_threshold:0.6",
                                     "expandable_segments:True,max_split_size_mb:128",
                                     "roundup_power2_divisions:[256:1,512:2,>:8]"};

std::uint64_t interestingSize(RecipeBytes& in) {
  static constexpr std::uint64_t kSizes[] = {0,
                                             1,
                                             511,
                                             512,
                                             513,
                                             1 << 20,
                                             (1 << 20) + 1,
                                             2 << 20,
                                             (10 << 20) - 1,
                                             10 << 20,
                                             1ull << 30,
                                             1ull << 31,
                                             1ull << 40,
                                             (1ull << 62) - 1};
  if (in.ConsumeBool()) return kSizes[in.ConsumeIntegralInRange<std::size_t>(0, std::size(kSizes) - 1)];
  return in.ConsumeIntegralInRange<std::uint64_t>(0, 1ull << 34);
}

Action anyAction(RecipeBytes& in) {
  return static_cast<Action>(in.ConsumeIntegralInRange<int>(0, static_cast<int>(reservoir::traces::kActionCount) - 1));
}

void mutateEvent(RecipeBytes& in, reservoir::traces::Snapshot& snap) {
  reservoir::traces::DeviceTrace& trace = snap.devices[0];
  std::vector<TraceEvent>& events = trace.events;
  if (events.empty()) return;
  // The times are a column beside the entries: edited as plain values, and kept in step.
  std::vector<std::int64_t> times(events.size());
  for (std::size_t k = 0; k < times.size(); ++k) times[k] = trace.timeOf(k);
  const std::size_t i = in.ConsumeIntegralInRange<std::size_t>(0, events.size() - 1);
  const auto at = [&](auto& v) { return v.begin() + static_cast<std::ptrdiff_t>(i); };
  TraceEvent& e = events[i];
  switch (in.ConsumeIntegralInRange<int>(0, 8)) {
    case 0: e.size = interestingSize(in); break;
    case 1: e.addr += static_cast<std::uint64_t>(in.ConsumeIntegralInRange<std::int64_t>(-(4 << 20), 4 << 20)); break;
    case 2: snap.setStream(e, in.ConsumeBool() ? 0 : in.ConsumeIntegral<std::uint16_t>()); break;
    case 3: e.action = anyAction(in); break;
    case 4: times[i] = in.ConsumeIntegral<std::int32_t>(); break;
    case 5:
      events.erase(at(events));
      times.erase(at(times));
      break;
    case 6:
      events.insert(at(events), TraceEvent(e));
      times.insert(at(times), times[i]);
      break;
    case 7: {
      const std::size_t j = in.ConsumeIntegralInRange<std::size_t>(0, events.size() - 1);
      std::swap(e, events[j]);
      std::swap(times[i], times[j]);
      break;
    }
    default:  // a cut recording (ring buffer)
      events.resize(i);
      times.resize(i);
      break;
  }
  trace.times = reservoir::CompactSeries(times);
}

void mutateSnapshot(RecipeBytes& in, Snapshot& snap) {
  const int mutations = in.ConsumeIntegralInRange<int>(0, 6);
  for (int m = 0; m < mutations && in.remaining_bytes() > 0; ++m) {
    switch (in.ConsumeIntegralInRange<int>(0, 7)) {
      case 6:
        snap.settings.present = true;
        snap.settings.roundup_power2_divisions[in.ConsumeIntegralInRange<std::size_t>(0, 15)] =
            in.ConsumeIntegralInRange<std::uint64_t>(0, 1u << 16);
        break;
      case 7:
        snap.settings.present = true;
        snap.settings.garbage_collection_threshold = in.ConsumeFloatingPoint<double>();
        break;
      case 0:
        if (!snap.segments.empty()) {
          auto& s = snap.segments[in.ConsumeIntegralInRange<std::size_t>(0, snap.segments.size() - 1)];
          s.total_size = interestingSize(in);
        }
        break;
      case 1:
        snap.settings.present = true;
        snap.settings.expandable_segments = in.ConsumeBool();
        break;
      case 2:
        snap.settings.present = true;
        snap.settings.max_split_size = in.ConsumeIntegral<std::int64_t>();
        break;
      case 3:
        if (!snap.segments.empty()) snap.segments.pop_back();  // final segments that do not match the events
        break;
      default: mutateEvent(in, snap); break;
    }
  }
}

std::vector<Edit> someEdits(RecipeBytes& in, std::size_t events) {
  std::vector<Edit> edits;
  const int n = in.ConsumeIntegralInRange<int>(0, 3);
  for (int k = 0; k < n; ++k) {
    const auto at = in.ConsumeIntegralInRange<std::size_t>(0, events + 2);
    std::string text;
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
      case 0: text = "cleanup event:" + std::to_string(at); break;
      case 1: text = "probe event:" + std::to_string(at); break;
      case 2: text = "demand " + std::to_string(interestingSize(in)) + "@event:" + std::to_string(at); break;
      default: text = "reset-peaks event:" + std::to_string(at); break;
    }
    auto e = reservoir::replay::parseEdit(text);
    if (e.ok()) edits.push_back(std::move(*e));
  }
  return edits;
}

void runEngine(RecipeBytes& in, const std::shared_ptr<const Snapshot>& snapshot) {
  const Snapshot& snap = *snapshot;
  reservoir::replay::ReplayEnvironment env;
  if (in.ConsumeBool()) env.fraction = in.ConsumeProbability<double>();
  auto prepared = reservoir::replay::prepareTrace(snapshot, 0, env);
  if (!prepared.ok()) return;
  reservoir::replay::WhatIfOptions w;
  if (in.ConsumeBool()) w.capacity = interestingSize(in);
  if (in.ConsumeBool()) w.overhead = in.ConsumeIntegralInRange<std::uint64_t>(0, 1ull << 30);
  if (w.capacity && w.overhead >= *w.capacity) w.overhead = 0;
  if (in.ConsumeBool()) w.fraction = in.ConsumeProbability<double>();
  const char* set = kSettings[in.ConsumeIntegralInRange<std::size_t>(0, std::size(kSettings) - 1)];
  if (*set) {
    auto cfg = reservoir::sim::parseAllocConf(set);
    if (cfg.ok()) w.settings = std::move(*cfg);
  }
  w.edits = someEdits(in, snap.devices[0].events.size());
  (void)reservoir::replay::runWhatIfOn(*prepared, w);
  if (const char* dump = std::getenv("WHATIF_FUZZER_DUMP")) {  // replaying a finding: what the engine got
    std::fprintf(stderr, "fraction(env) %s capacity %s overhead %llu fraction %s settings '%s' edits %zu\n",
                 env.fraction ? std::to_string(*env.fraction).c_str() : "-",
                 w.capacity ? std::to_string(*w.capacity).c_str() : "-", static_cast<unsigned long long>(w.overhead),
                 w.fraction ? std::to_string(*w.fraction).c_str() : "-", set, w.edits.size());
    for (const auto& e : w.edits) std::fprintf(stderr, "  edit %s\n", e.text.c_str());
    if (auto bytes = reservoir::traces::writeSnapshotBytes(snap); bytes.ok())
      if (std::FILE* f = std::fopen(dump, "wb")) {
        std::fwrite(bytes->data(), 1, bytes->size(), f);
        std::fclose(f);
      }
  }
  if (in.ConsumeBool()) {
    reservoir::replay::SweepOptions o;
    static_cast<reservoir::replay::EditedRunOptions&>(o) = w;
    o.max_candidates = 3;
    o.jobs = 1;
    (void)reservoir::replay::runSweep(*prepared, o);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  RecipeBytes in(data, size);
  reservoir::replay::SynthOptions synth;
  synth.events = in.ConsumeIntegralInRange<std::size_t>(1, 200);
  synth.seed = in.ConsumeIntegral<std::uint16_t>();
  synth.settings = kSettings[in.ConsumeIntegralInRange<std::size_t>(0, std::size(kSettings) - 1)];
  synth.budget = in.ConsumeIntegralInRange<std::uint64_t>(1 << 20, 8ull << 30);
  synth.side_fraction = in.ConsumeProbability<double>();
  synth.record_stream_fraction = in.ConsumeProbability<double>();
  synth.empty_cache_every = in.ConsumeIntegralInRange<std::size_t>(0, 200);
  auto trace = reservoir::replay::synthesizeTrace(synth);
  if (!trace.ok()) return 0;
  Snapshot& snap = trace->snapshot;
  if (snap.devices.empty()) return 0;
  mutateSnapshot(in, snap);
  // Through a file's path: the writer, then the reader (and its validation).
  auto bytes = reservoir::traces::writeSnapshotBytes(snap);
  if (!bytes.ok()) return 0;
  auto read = reservoir::traces::readSnapshotBytes(*bytes, "fuzz");
  if (!read.ok() || read->devices.empty()) return 0;
  runEngine(in, std::make_shared<const Snapshot>(std::move(*read)));
  return 0;
}
