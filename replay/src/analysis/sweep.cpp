#include "reservoir/replay/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

#include "reservoir/replay/callgraph.h"
#include "whatif/run_engine.h"

namespace reservoir::replay {
namespace {

struct Candidate {
  std::vector<std::string> flags;
  std::string description;
  std::vector<ResolvedEdit> edits;  // cleanups (resolved)
  std::optional<sim::AllocatorConfig> settings;
  std::uint32_t first_op = 0;
  std::size_t cleanups = 0;
};

std::optional<Candidate> cleanupCandidate(const PreparedTrace& p, const std::string& point_text,
                                          std::string description) {
  auto point = parsePoint(point_text);
  if (!point) return std::nullopt;
  auto gaps = resolvePoint(*point, *p.snapshot, p.device_index);
  if (!gaps || gaps->empty()) return std::nullopt;
  Candidate c;
  c.flags = {"--cleanup", point_text};
  c.description = std::move(description);
  Edit e;
  e.kind = Edit::Kind::kCleanup;
  e.text = point_text;
  e.point = *point;
  c.cleanups = gaps->size();
  c.first_op = kNoOp;
  for (const Gap& g : *gaps) c.first_op = std::min(c.first_op, p.program.at_boundary.at(g.boundary));
  c.edits.push_back(ResolvedEdit{e, std::move(*gaps)});
  return c;
}

void addRegionCandidates(const PreparedTrace& p, const SweepOptions& o, std::vector<Candidate>& out,
                         std::set<std::vector<std::uint32_t>>& seen_gaps) {
  const CallGraph graph(*p.snapshot, p.device_index);
  const auto ranked = graph.byAllocatedBytes(1);
  auto add = [&](const std::string& text, const std::string& why) {
    auto c = cleanupCandidate(p, text, why);
    if (!c) return;
    std::vector<std::uint32_t> key;
    for (const auto& g : c->edits[0].gaps) key.push_back(g.boundary * 2 + static_cast<std::uint32_t>(g.phase));
    if (!seen_gaps.insert(key).second) return;  // another name for the same placement
    out.push_back(std::move(*c));
  };
  for (std::size_t i = 0; i < ranked.size() && i < o.top_functions; ++i) {
    const Function& f = graph.function(ranked[i]);
    const std::string why = fmt::format("{} allocates {} in {} run(s)", f.point_name, f.alloc_bytes, f.runs);
    add("after:" + f.point_name, "empty_cache after each run of " + why);
    add("before:" + f.point_name, "empty_cache before each run of " + why);
    if (f.runs > 1 && f.runs <= 4)
      for (std::uint32_t k = 1; k <= f.runs; ++k) {
        add(fmt::format("after:{}#{}", f.point_name, k), fmt::format("empty_cache after run {} of {}", k, why));
        add(fmt::format("before:{}#{}", f.point_name, k), fmt::format("empty_cache before run {} of {}", k, why));
      }
  }
}

void addAnnotationCandidates(const PreparedTrace& p, std::vector<Candidate>& out,
                             std::set<std::vector<std::uint32_t>>& seen) {
  std::set<std::string> names;
  for (const auto& a : p.snapshot->annotations) names.insert(a.name);
  for (const auto& n : names)
    for (const char* stage : {"start", "end"}) {
      auto c = cleanupCandidate(p, fmt::format("annotation:{}:{}", n, stage),
                                fmt::format("empty_cache at each {} of {}", stage, n));
      if (!c) continue;
      std::vector<std::uint32_t> key;
      for (const auto& g : c->edits[0].gaps) key.push_back(g.boundary * 2 + static_cast<std::uint32_t>(g.phase));
      if (seen.insert(key).second) out.push_back(std::move(*c));
    }
}

void addSettingsCandidates(const EditedRun& device, std::vector<Candidate>& out) {
  const sim::AllocatorConfig& cfg = device.config;
  std::vector<std::pair<std::string, std::string>> options;
  if (!cfg.expandable_segments) options.emplace_back("expandable_segments:True", "expandable segments");
  for (int mb : {64, 128, 256, 512})
    options.emplace_back(fmt::format("max_split_size_mb:{}", mb), fmt::format("no splitting of blocks >= {} MiB", mb));
  options.emplace_back("roundup_power2_divisions:4", "power-of-two rounding (4 divisions)");
  if (device.fraction < 1.0)
    options.emplace_back("garbage_collection_threshold:0.8", "garbage collection at 80% of the fraction");
  for (auto& [conf, why] : options) {
    std::string full = cfg.toConfString();
    full = full.empty() ? conf : full + "," + conf;
    auto parsed = sim::parseAllocConf(full);
    if (!parsed) continue;  // cannot happen: a valid configuration plus a valid key
    Candidate c;
    c.flags = {"--set", full};
    c.description = "allocator settings: " + why;
    c.settings = std::move(*parsed);
    out.push_back(std::move(c));
  }
}

struct Evaluation {
  RunResult run;
  std::optional<std::int64_t> at_point;
};

std::optional<std::int64_t> probeValue(const RunResult& r) {
  if (r.probes.empty()) return std::nullopt;
  return r.probes.front().reserved;
}

// Runs `worker` on `jobs` threads, this one included; when the system gives no more threads,
// the ones started (and this one) do the work.
template <typename F>
void runOnThreads(unsigned jobs, F& worker) {
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < jobs; ++t) {
    try {
      threads.emplace_back(std::ref(worker));
    } catch (const std::system_error&) {
      break;
    }
  }
  worker();
  for (auto& t : threads) t.join();
}

}  // namespace

Expected<SweepReport> runSweep(const PreparedTrace& p, const SweepOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  SweepReport rep;
  // Every candidate runs on the edited run's device (the same one `whatif` would choose).
  const EditedRun device = chooseEditedRun(p, o);
  const RunSettings base = device.edited();
  std::vector<ResolvedEdit> observe;
  if (o.minimize_at) {
    auto gaps = resolvePoint(*o.minimize_at, *p.snapshot, p.device_index);
    if (!gaps) return Status::error("the point to minimize at: " + gaps.message());
    Edit probe;
    probe.kind = Edit::Kind::kProbe;
    probe.text = o.minimize_at->text;
    probe.point = *o.minimize_at;
    observe.push_back(ResolvedEdit{probe, {gaps->front()}});
    rep.objective = "reserved at " + o.minimize_at->text;
  } else {
    rep.objective = "peak reserved";
  }
  std::vector<Candidate> cands;
  std::set<std::vector<std::uint32_t>> seen;
  addRegionCandidates(p, o, cands, seen);
  addAnnotationCandidates(p, cands, seen);
  if (o.try_settings) addSettingsCandidates(device, cands);
  if (cands.size() > o.max_candidates) cands.resize(o.max_candidates);
  if (o.slices > 1) {
    const std::size_t n = cands.size(), k = std::min(o.slice, o.slices - 1);
    const auto first = static_cast<std::ptrdiff_t>(k * n / o.slices),
               last = static_cast<std::ptrdiff_t>((k + 1) * n / o.slices);
    cands = std::vector<Candidate>(std::make_move_iterator(cands.begin() + first),
                                   std::make_move_iterator(cands.begin() + std::max(first, last)));
  }

  // One baseline pass with checkpoints; each placement then resumes from the checkpoint
  // before its first cleanup instead of replaying from the start.
  std::deque<detail::Runner> checkpoints;
  detail::Runner runner(p, observe, base);
  const std::uint32_t every = std::max<std::uint32_t>(o.checkpoint_every, 1);
  while (!runner.done()) {
    if (runner.nextOp() % every == 0) checkpoints.emplace_back(runner);
    runner.step();
  }
  runner.finish();
  const RunResult& b = runner.result();
  rep.baseline_peak_reserved = b.peak_reserved.bytes;
  rep.baseline_peak_allocated = b.peak_allocated.bytes;
  rep.baseline_reserved_at_point = probeValue(b);
  const std::int64_t baseline_objective = rep.baseline_reserved_at_point.value_or(b.peak_reserved.bytes);

  // Longest replays first (settings run the whole trace; a placement from its first cleanup
  // on), so that the workers finish together instead of one waiting on a long last one.
  std::vector<std::size_t> order(cands.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    const std::uint32_t fx = cands[x].settings ? 0 : cands[x].first_op, fy = cands[y].settings ? 0 : cands[y].first_op;
    return fx < fy;
  });
  std::vector<std::optional<Evaluation>> results(cands.size());
  std::atomic<std::size_t> next{0}, done{0};
  std::mutex progress_mutex;
  auto worker = [&] {
    for (std::size_t n = next++; n < cands.size(); n = next++) {
      if (o.cancel && o.cancel->load()) return;
      const std::size_t i = order[n];
      const Candidate& c = cands[i];
      Evaluation ev;
      if (c.settings) {
        RunSettings s = base;
        s.config = *c.settings;
        ev.run = replayProgram(p, observe, s);
      } else {
        const std::size_t k =
            std::min<std::size_t>(c.first_op / every, checkpoints.empty() ? 0 : checkpoints.size() - 1);
        detail::Runner r(checkpoints.empty() ? detail::Runner(p, observe, base) : checkpoints[k]);
        r.addEdits(c.edits);
        while (!r.done()) r.step();
        r.finish();
        ev.run = r.result();
      }
      ev.at_point = probeValue(ev.run);
      results[i] = std::move(ev);
      const std::size_t d = ++done;
      if (o.progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        o.progress(d, cands.size());
      }
    }
  };
  runOnThreads(o.jobs ? o.jobs : std::max(1u, std::thread::hardware_concurrency()), worker);

  for (std::size_t i = 0; i < cands.size(); ++i) {
    if (!results[i]) {
      rep.cancelled = true;
      continue;
    }
    const auto& ev = *results[i];
    SweepCandidate sc;
    sc.edits = cands[i].flags;
    sc.description = cands[i].description;
    sc.peak_reserved = ev.run.peak_reserved.bytes;
    sc.peak_allocated = ev.run.peak_allocated.bytes;
    sc.reserved_at_point = ev.at_point;
    sc.saving = baseline_objective - ev.at_point.value_or(ev.run.peak_reserved.bytes);
    sc.empty_cache_calls = cands[i].cleanups;
    sc.oom = ev.run.oom.has_value() && !b.oom.has_value();
    rep.candidates.push_back(std::move(sc));
  }
  rep.evaluated = rep.candidates.size();
  rankCandidates(rep.candidates);
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

void rankCandidates(std::vector<SweepCandidate>& candidates) {
  std::stable_sort(candidates.begin(), candidates.end(), [](const SweepCandidate& x, const SweepCandidate& y) {
    if (x.oom != y.oom) return !x.oom;
    const auto ox = x.reserved_at_point.value_or(x.peak_reserved), oy = y.reserved_at_point.value_or(y.peak_reserved);
    if (ox != oy) return ox < oy;
    if (x.peak_reserved != y.peak_reserved) return x.peak_reserved < y.peak_reserved;
    return x.empty_cache_calls < y.empty_cache_calls;
  });
}

SweepReport mergeSweepSlices(const std::vector<SweepReport>& slices) {
  if (slices.empty()) return {};
  SweepReport rep = slices.front();
  rep.candidates.clear();
  rep.evaluated = 0;
  rep.seconds = 0;
  for (const auto& s : slices) {
    rep.candidates.insert(rep.candidates.end(), s.candidates.begin(), s.candidates.end());
    rep.evaluated += s.evaluated;
    rep.seconds += s.seconds;
    rep.cancelled = rep.cancelled || s.cancelled;
  }
  rankCandidates(rep.candidates);  // each slice is ranked; ties keep the slices' order, as one run would
  return rep;
}

namespace {

std::int64_t objectiveOf(const std::optional<std::int64_t>& at_point, std::int64_t peak) {
  return at_point.value_or(peak);
}

// One candidate on one trace, or that trace's baseline when the trace did not make it.
void worsen(SweepCandidate& into, const SweepCandidate* on_trace, const SweepReport& trace, bool first) {
  const std::int64_t peak = on_trace ? on_trace->peak_reserved : trace.baseline_peak_reserved;
  const std::int64_t allocated = on_trace ? on_trace->peak_allocated : trace.baseline_peak_allocated;
  const std::optional<std::int64_t> at = on_trace ? on_trace->reserved_at_point : trace.baseline_reserved_at_point;
  into.peak_reserved = first ? peak : std::max(into.peak_reserved, peak);
  into.peak_allocated = first ? allocated : std::max(into.peak_allocated, allocated);
  if (at) into.reserved_at_point = first || !into.reserved_at_point ? *at : std::max(*into.reserved_at_point, *at);
  if (on_trace) {
    into.oom = into.oom || on_trace->oom;
    into.empty_cache_calls = std::max(into.empty_cache_calls, on_trace->empty_cache_calls);
  }
}

}  // namespace

SweepReport worstOverTraces(const std::vector<SweepReport>& per_trace) {
  if (per_trace.size() == 1) return per_trace.front();
  SweepReport rep;
  std::vector<std::vector<std::string>> keys;  // each candidate's flags, in the order first made
  std::vector<std::map<std::vector<std::string>, const SweepCandidate*>> by_key(per_trace.size());
  for (std::size_t t = 0; t < per_trace.size(); ++t) {
    const SweepReport& r = per_trace[t];
    rep.objective = r.objective;
    rep.baseline_peak_reserved = std::max(rep.baseline_peak_reserved, r.baseline_peak_reserved);
    rep.baseline_peak_allocated = std::max(rep.baseline_peak_allocated, r.baseline_peak_allocated);
    if (r.baseline_reserved_at_point)
      rep.baseline_reserved_at_point =
          std::max(rep.baseline_reserved_at_point.value_or(0), *r.baseline_reserved_at_point);
    rep.seconds += r.seconds;
    rep.cancelled = rep.cancelled || r.cancelled;
    for (const auto& c : r.candidates)
      if (by_key[t].emplace(c.edits, &c).second && std::find(keys.begin(), keys.end(), c.edits) == keys.end())
        keys.push_back(c.edits);
  }
  const std::int64_t baseline = objectiveOf(rep.baseline_reserved_at_point, rep.baseline_peak_reserved);
  for (const auto& key : keys) {
    SweepCandidate c;
    c.edits = key;
    for (std::size_t t = 0; t < per_trace.size(); ++t) {
      const auto it = by_key[t].find(key);
      const SweepCandidate* on = it == by_key[t].end() ? nullptr : it->second;
      if (on && c.description.empty()) c.description = on->description;
      worsen(c, on, per_trace[t], t == 0);
    }
    c.saving = baseline - objectiveOf(c.reserved_at_point, c.peak_reserved);
    rep.candidates.push_back(std::move(c));
  }
  rep.evaluated = rep.candidates.size();
  rankCandidates(rep.candidates);
  return rep;
}

}  // namespace reservoir::replay
