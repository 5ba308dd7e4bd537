#include "reservoir/replay/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "analysis/settings_ahead.h"
#include "reservoir/replay/callgraph.h"
#include "reservoir/simulator/sizes.h"
#include "whatif/program_period.h"
#include "whatif/run_engine.h"

namespace reservoir::replay {
namespace {

struct Candidate {
  std::vector<CandidateChange> changes;
  std::string description;
  std::vector<ResolvedEdit> edits;  // cleanups (resolved)
  std::optional<sim::AllocatorConfig> settings;
  std::size_t settings_index = 0;  // a settings candidate's place among the sweep's settings (SettingsAhead)
  std::uint32_t first_op = 0;
  std::vector<std::uint32_t> ops;  // per gap of its cleanup (edits[0]): the op it runs before
  std::size_t cleanups = 0;
  std::uint32_t depth = 0;  // the placement's call depth (annotations: deepest)
};

// A cleanup at `point_text`, whose gaps the caller resolved (none: no candidate).
std::optional<Candidate> cleanupCandidateAt(const PreparedTrace& p, const std::string& point_text,
                                            std::string description, std::vector<Gap> gaps) {
  auto point = parsePoint(point_text);
  if (!point || gaps.empty()) return std::nullopt;
  Candidate c;
  c.changes = {{CandidateChange::Kind::kCleanup, point_text, {}}};
  c.description = std::move(description);
  Edit e;
  e.kind = Edit::Kind::kCleanup;
  e.text = point_text;
  e.point = *point;
  c.cleanups = gaps.size();
  c.first_op = kNoOp;
  OpBoundaryCursor at(p.program);
  c.ops.reserve(gaps.size());
  for (const Gap& g : gaps) {
    c.ops.push_back(at.at(g.boundary));
    c.first_op = std::min(c.first_op, c.ops.back());
  }
  c.edits.push_back(ResolvedEdit{e, std::move(gaps)});
  return c;
}

bool isLibraryFile(std::string_view file) {
  return file.find("site-packages/") != std::string_view::npos ||
         file.find("dist-packages/") != std::string_view::npos || file.find("/lib/python") != std::string_view::npos ||
         file.starts_with("<");
}

// Per function (file, name): how many of the program's own frames (not a library's) are
// outside its first call, i.e. how deep in the user's code a cleanup placed at its call site
// sits ("after dcp.load" in main: main and <module>).
std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> userDepths(const traces::Snapshot& snap,
                                                                            std::size_t device_index) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> depth;
  std::vector<bool> seen(snap.stackCount(), false);
  // Whether each file is a library's, decided once per file, not per frame of every stack (a
  // 100 MB file name scanned per frame made a sweep take minutes).
  std::unordered_map<std::uint32_t, bool> library;
  auto isLibrary = [&](StringId file) {
    auto [it, added] = library.try_emplace(file.value(), false);
    if (added) it->second = isLibraryFile(snap.str(file));
    return it->second;
  };
  for (const auto& e : snap.devices[device_index].events) {
    if (!e.stack.valid() || e.stack.value() >= seen.size() || seen[e.stack.value()]) continue;
    seen[e.stack.value()] = true;
    const auto frames = snap.stack(e.stack);
    std::uint32_t user = 0;  // own frames outside frames[i], counted from the outermost
    for (std::size_t k = frames.size(); k-- > 0;) {
      const traces::Frame& f = snap.frames[frames[k].value()];
      depth.emplace(std::make_pair(f.filename.value(), f.name.value()), user);
      if (!isLibrary(f.filename)) ++user;
    }
  }
  return depth;
}

// A point longer than this cannot be given on a command line (one argument is at most 128 KiB
// on Linux), and each candidate holds its text several times (flags, edit, description): a
// function whose frame has a 100 MB file name would cost gigabytes. Such functions (and
// annotations) are not candidates.
constexpr std::size_t kMaxPointText = 4096;

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

unsigned jobsOf(const SweepOptions& o) { return o.jobs ? o.jobs : std::max(1u, std::thread::hardware_concurrency()); }

// The placements tried around one function: after and before each of its calls, and after and
// before each single call when it is called 2-4 times.
struct RegionFunction {
  std::uint32_t depth = 0;
  std::vector<std::pair<std::string, std::string>> points;  // (point text, description)
};

std::vector<RegionFunction> regionFunctions(const PreparedTrace& p, const SweepOptions& o) {
  const CallGraph graph(*p.snapshot, p.device_index);
  const auto depths = userDepths(*p.snapshot, p.device_index);
  const auto ranked = graph.byAllocatedBytes(1);
  std::vector<RegionFunction> out;
  for (std::size_t i = 0, considered = 0; i < ranked.size() && considered < o.top_functions; ++i) {
    const Function& f = graph.function(ranked[i]);
    if (f.point_name.size() > kMaxPointText) continue;
    ++considered;
    RegionFunction r;
    const auto d = depths.find({f.file.value(), f.name.value()});
    r.depth = d == depths.end() ? f.depth : d->second;
    const std::string why = fmt::format("{} ({} allocated in {} run{})", f.point_name, sim::formatSize(f.alloc_bytes),
                                        f.runs, f.runs == 1 ? "" : "s");
    r.points.emplace_back("after:" + f.point_name, "empty_cache after each run of " + why);
    r.points.emplace_back("before:" + f.point_name, "empty_cache before each run of " + why);
    if (f.runs > 1 && f.runs <= 4)
      for (std::uint32_t k = 1; k <= f.runs; ++k) {
        r.points.emplace_back(fmt::format("after:{}#{}", f.point_name, k),
                              fmt::format("empty_cache after run {} of {}", k, why));
        r.points.emplace_back(fmt::format("before:{}#{}", f.point_name, k),
                              fmt::format("empty_cache before run {} of {}", k, why));
      }
    out.push_back(std::move(r));
  }
  return out;
}

// One function's candidates, a point each (none where the point names no gap). Its points
// share their frame's calls, found once (a pass over the trace) rather than once per point.
std::vector<std::optional<Candidate>> functionCandidates(const PreparedTrace& p, const EventStacks& stacks,
                                                         const RegionFunction& f) {
  std::vector<std::optional<Candidate>> out;
  std::map<std::string, std::vector<FrameCall>> calls;  // by frame text ("f#12" may name another frame)
  for (const auto& [text, why] : f.points) {
    auto point = parsePoint(text);
    if (!point) {
      out.emplace_back();
      continue;
    }
    auto it = calls.find(point->frame.text);
    if (it == calls.end()) it = calls.emplace(point->frame.text, frameCalls(*point, *p.snapshot, stacks)).first;
    out.push_back(cleanupCandidateAt(p, text, why, gapsOfCalls(*point, it->second)));
    if (out.back()) out.back()->depth = f.depth;
  }
  return out;
}

// The region candidates, in the order of the functions by allocated bytes; the functions are
// shared out over the sweep's threads.
void addRegionCandidates(const PreparedTrace& p, const SweepOptions& o, std::vector<Candidate>& out,
                         std::set<std::vector<std::uint32_t>>& seen_gaps) {
  const auto functions = regionFunctions(p, o);
  if (o.cancel && o.cancel->load()) return;
  // Each candidate point is a pass over the trace's events: what it reads of them, made once.
  const EventStacks stacks = eventStacks(*p.snapshot, p.device_index);
  std::vector<std::vector<std::optional<Candidate>>> found(functions.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < functions.size(); i = next++) {
      if (o.cancel && o.cancel->load(std::memory_order_relaxed)) return;  // each function is a pass over the trace
      found[i] = functionCandidates(p, stacks, functions[i]);
    }
  };
  runOnThreads(jobsOf(o), worker);
  for (auto& candidates : found)
    for (auto& c : candidates) {
      if (!c) continue;
      std::vector<std::uint32_t> key;
      for (const auto& g : c->edits[0].gaps) key.push_back(g.boundary * 2 + static_cast<std::uint32_t>(g.phase));
      if (seen_gaps.insert(key).second) out.push_back(std::move(*c));  // else another name for the same placement
    }
}

void addAnnotationCandidates(const PreparedTrace& p, std::vector<Candidate>& out,
                             std::set<std::vector<std::uint32_t>>& seen) {
  auto by_name = resolveAnnotationPoints(*p.snapshot, p.device_index);
  for (auto& [n, gaps] : by_name) {
    if (n.size() > kMaxPointText) continue;
    for (std::size_t s = 0; s < 2; ++s) {
      const char* stage = s == 0 ? "start" : "end";
      auto c = cleanupCandidateAt(p, fmt::format("annotation:{}:{}", n, stage),
                                  fmt::format("empty_cache at each {} of {}", stage, n), std::move(gaps[s]));
      if (!c) continue;
      c->depth = kAnnotationDepth;
      std::vector<std::uint32_t> key;
      for (const auto& g : c->edits[0].gaps) key.push_back(g.boundary * 2 + static_cast<std::uint32_t>(g.phase));
      if (seen.insert(key).second) out.push_back(std::move(*c));
    }
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
    c.changes = {{CandidateChange::Kind::kSettings, {}, full}};
    c.description = "allocator settings: " + why;
    c.settings = std::move(*parsed);
    c.settings_index = out.size();
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

std::int64_t objectiveValue(const SweepObjective& o, const RunResult& r) {
  switch (o.kind) {
    case SweepObjective::Kind::kPeak: return r.peak_reserved.bytes;
    case SweepObjective::Kind::kReservedAt: return probeValue(r).value_or(r.peak_reserved.bytes);
    case SweepObjective::Kind::kPeakIn: return r.peak_in_windows.value_or(0);
  }
  return r.peak_reserved.bytes;
}

// The op ranges of an annotation: each START paired with the first END after it.
Expected<std::vector<OpWindow>> annotationWindows(const PreparedTrace& p, const std::string& name) {
  auto gapsOf = [&](const char* stage) -> Expected<std::vector<Gap>> {
    auto point = parsePoint(fmt::format("annotation:{}:{}", name, stage));
    if (!point) return point.status();
    return resolvePoint(*point, *p.snapshot, p.device_index);
  };
  auto starts = gapsOf("start");
  if (!starts) return starts.status().prefixed("peak-in:" + name + ": ");  // a usage error stays one
  auto ends = gapsOf("end");
  if (!ends) return ends.status().prefixed("peak-in:" + name + ": ");
  std::vector<OpWindow> w;
  std::size_t e = 0;
  for (const Gap& s : *starts) {
    // The state after op j lies between ops j and j+1: a range from the gap before op b to
    // the gap before op e is the states after ops b-1 .. e-1 (at least the one at its start,
    // for a range with no events inside, like a broadcast into tensors already there).
    const std::uint32_t b = opAtBoundary(p.program, s.boundary);
    while (e < ends->size() && opAtBoundary(p.program, (*ends)[e].boundary) < b) ++e;
    const auto last = e < ends->size() ? opAtBoundary(p.program, (*ends)[e++].boundary)
                                       : static_cast<std::uint32_t>(p.program.ops.size());
    const std::uint32_t begin = b > 0 ? b - 1 : 0;
    const std::uint32_t end = std::max(last, begin + 1);
    if (!w.empty() && begin <= w.back().end)
      w.back().end = std::max(w.back().end, end);
    else
      w.push_back(OpWindow{begin, end});
  }
  return w;
}

// What every candidate's run observes: a probe at the objective's point, or the windows of
// its annotation.
Status setUpObjective(const PreparedTrace& p, const SweepObjective& obj, std::vector<ResolvedEdit>& observe,
                      RunSettings& base) {
  if (obj.kind == SweepObjective::Kind::kReservedAt) {
    auto gaps = resolvePoint(*obj.point, *p.snapshot, p.device_index);
    if (!gaps) return gaps.status().prefixed("the point to minimize at: ");  // a usage error stays one
    Edit probe;
    probe.kind = Edit::Kind::kProbe;
    probe.text = obj.point->text;
    probe.point = *obj.point;
    observe.push_back(ResolvedEdit{probe, {gaps->front()}});
  } else if (obj.kind == SweepObjective::Kind::kPeakIn) {
    auto w = annotationWindows(p, obj.annotation);
    if (!w) return w.status();
    base.peak_windows = std::move(*w);
  }
  return {};
}

// Keeps slice `o.slice` of `o.slices` equal parts of the candidates, in the order they were made.
void keepSlice(const SweepOptions& o, std::vector<Candidate>& cands) {
  if (o.slices <= 1) return;
  const std::size_t n = cands.size(), k = std::min(o.slice, o.slices - 1);
  const auto first = static_cast<std::ptrdiff_t>(k * n / o.slices),
             last = static_cast<std::ptrdiff_t>((k + 1) * n / o.slices);
  cands = std::vector<Candidate>(std::make_move_iterator(cands.begin() + first),
                                 std::make_move_iterator(cands.begin() + std::max(first, last)));
}

// The cap on empty_cache calls: the one given, else one per training step where steps are known.
void chooseCap(const PreparedTrace& p, const SweepOptions& o, SweepReport& rep) {
  if (o.steps)
    rep.steps = TrainingSteps{*o.steps, "count given"};
  else
    rep.steps = detectTrainingSteps(*p.snapshot, p.device_index);
  if (o.max_calls) {
    rep.max_calls = o.max_calls;
    rep.max_calls_source = "given";
  } else if (rep.steps && rep.steps->count > 0) {
    rep.max_calls = rep.steps->count;
    rep.max_calls_source =
        fmt::format("one per training step ({} step(s), from the {})", rep.steps->count, rep.steps->source);
  } else {
    rep.max_calls_source = "no cap: the trace shows no training steps";
  }
}

// Marks the candidates no other beats on both saving and price (those that run out of memory
// left out: on a device the run does not fit, the front is the cleanups that make it fit, and
// empty when none does) and lists them cheapest first.
void markPareto(SweepReport& rep) {
  auto& c = rep.candidates;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (c[i].oom || c[i].saving <= 0) continue;
    bool dominated = false;
    for (std::size_t j = 0; j < c.size() && !dominated; ++j) {
      if (j == i || c[j].oom) continue;
      const bool no_worse = c[j].saving >= c[i].saving && c[j].price_seconds <= c[i].price_seconds;
      const bool better = c[j].saving > c[i].saving || c[j].price_seconds < c[i].price_seconds;
      dominated = no_worse && (better || j < i);  // equal twins: the better ranked one stays
    }
    c[i].pareto = !dominated;
    if (c[i].pareto) rep.pareto.push_back(i);
  }
  std::stable_sort(rep.pareto.begin(), rep.pareto.end(),
                   [&](std::size_t x, std::size_t y) { return c[x].price_seconds < c[y].price_seconds; });
}

SweepCandidate scoreCandidate(const Candidate& cand, const Evaluation& ev, const RunResult& b, const SweepOptions& o,
                              const SweepReport& rep) {
  SweepCandidate sc;
  sc.changes = cand.changes;
  sc.edits = changeFlags(cand.changes);
  sc.description = cand.description;
  sc.settings = cand.settings.has_value();
  sc.peak_reserved = ev.run.peak_reserved.bytes;
  sc.peak_allocated = ev.run.peak_allocated.bytes;
  sc.reserved_at_point = ev.at_point;
  if (o.objective.kind == SweepObjective::Kind::kPeakIn) sc.peak_in = ev.run.peak_in_windows;
  sc.objective_value = objectiveValue(o.objective, ev.run);
  sc.saving = rep.baseline_objective - sc.objective_value;
  sc.empty_cache_calls = cand.cleanups;
  sc.price_seconds = sc.settings ? 0.0 : cleanupPriceSeconds(b, ev.run, cand.cleanups, o.price);
  if (rep.steps && rep.steps->count > 0) {
    const auto steps = static_cast<double>(rep.steps->count);
    sc.calls_per_step = static_cast<double>(sc.empty_cache_calls) / steps;
    sc.price_per_step_seconds = sc.price_seconds / steps;
  }
  sc.mean_reserved = ev.run.mean_reserved;
  sc.depth = cand.depth;
  sc.within_cap = !rep.max_calls || sc.empty_cache_calls <= *rep.max_calls;
  // Runs out of memory on the sweep's device: also when the unedited run does (then a candidate
  // that fits is the fix, and one that does not is no answer).
  sc.oom = ev.run.oom.has_value();
  return sc;
}

}  // namespace

bool sweepRanksBefore(const SweepCandidate& x, const SweepCandidate& y) {
  if (x.oom != y.oom) return !x.oom;
  if (x.within_cap != y.within_cap) return x.within_cap;
  if (x.saving != y.saving) return x.saving > y.saving;
  if (x.price_seconds != y.price_seconds) return x.price_seconds < y.price_seconds;
  if (x.depth != y.depth) return x.depth < y.depth;
  if (x.mean_reserved != y.mean_reserved) return x.mean_reserved < y.mean_reserved;
  return x.empty_cache_calls < y.empty_cache_calls;
}

namespace {

// Whether the sweep was cancelled, looked at every 4096 ops of a replay.
bool cancelledAt(const SweepOptions& o, std::uint32_t op) {
  return o.cancel && (op & 4095) == 0 && o.cancel->load(std::memory_order_relaxed);
}

// What decides a placement's replay: the op before which each of its empty_cache calls runs (one
// entry per call, as the runner counts them). Where an observed point (the objective's probe) is
// at the same op, the order between the two depends on their events, so the call's event
// boundary and phase are part of the key there. Two placements with the same key replay the same
// run: cleanups at different events between the same two allocator requests do the same thing.
std::vector<std::uint64_t> runKey(const Candidate& c, const std::set<std::uint32_t>& observed) {
  std::vector<std::uint64_t> key;
  const std::vector<Gap>& gaps = c.edits.front().gaps;
  for (std::size_t k = 0; k < gaps.size(); ++k) {
    const std::uint32_t op = c.ops[k];
    const std::uint64_t order =
        observed.count(op) ? std::uint64_t{gaps[k].boundary} * 2 + static_cast<std::uint32_t>(gaps[k].phase) + 1 : 0;
    key.push_back(std::uint64_t{op} << 32 | order);
  }
  std::sort(key.begin(), key.end());
  return key;
}

// For each candidate, the first candidate whose replay is the same run (itself if none): a
// placement under another name, or at other events between the same allocator requests, is
// replayed once. Settings candidates are all replayed.
std::vector<std::size_t> sameRunAs(const PreparedTrace& p, const std::vector<Candidate>& cands,
                                   const std::vector<ResolvedEdit>& observe) {
  std::set<std::uint32_t> observed;
  for (const ResolvedEdit& e : observe) {
    OpBoundaryCursor at(p.program);
    for (const Gap& g : e.gaps) observed.insert(at.at(g.boundary));
  }
  std::map<std::vector<std::uint64_t>, std::size_t> first;
  std::vector<std::size_t> out(cands.size());
  for (std::size_t i = 0; i < cands.size(); ++i)
    out[i] = cands[i].settings ? i : first.try_emplace(runKey(cands[i], observed), i).first->second;
  return out;
}

RunSettings withCancel(RunSettings s, const std::atomic<bool>* cancel) {
  s.cancel = cancel;
  return s;
}

std::vector<sim::AllocatorConfig> configsOf(const std::vector<Candidate>& settings) {
  std::vector<sim::AllocatorConfig> out;
  for (const Candidate& c : settings) out.push_back(*c.settings);
  return out;
}

// The baseline's state at the ops where placements start: the checkpoint every `every` ops
// before a placement's first cleanup, taken only where one starts (most start in the first
// training step; a copy of the runner at every 4096 ops of train150 was 147 copies for 2 used).
class BaselineCheckpoints {
 public:
  BaselineCheckpoints(const std::vector<Candidate>& cands, std::uint32_t every, std::size_t ops) : every_(every) {
    if (ops == 0) return;
    wanted_.assign((ops - 1) / every + 1, false);
    for (const Candidate& c : cands)
      if (!c.settings) wanted_[std::min<std::size_t>(c.first_op / every, wanted_.size() - 1)] = true;
  }
  // Keeps `runner` (about to run op `op`) if a placement starts from there.
  void offer(const detail::Runner& runner, std::uint32_t op) {
    if (op % every_ != 0 || op / every_ >= wanted_.size() || !wanted_[op / every_]) return;
    runners_.emplace_back(runner);
    at_.push_back(op);
  }
  // The latest checkpoint at or before op `op`, or null (then the run starts from the beginning).
  [[nodiscard]] const detail::Runner* before(std::uint32_t op) const {
    const auto it = std::upper_bound(at_.begin(), at_.end(), op);
    return it == at_.begin() ? nullptr : &runners_[static_cast<std::size_t>(it - at_.begin()) - 1];
  }

 private:
  std::uint32_t every_;
  std::vector<bool> wanted_;  // per multiple of `every_`: whether a placement starts from it
  std::deque<detail::Runner> runners_;
  std::vector<std::uint32_t> at_;  // the op of each, ascending
};

// Every candidate replayed: settings from the start, a placement from the checkpoint before
// its first cleanup; one run serves the candidates `same_run` maps to the same one. `results[i]`
// stays empty for the ones a cancel skipped.
std::vector<std::optional<Evaluation>> evaluateAll(const PreparedTrace& p, const SweepOptions& o,
                                                   const std::vector<Candidate>& cands,
                                                   const std::vector<std::size_t>& same_run,
                                                   const std::vector<ResolvedEdit>& observe, const RunSettings& base,
                                                   const detail::ProgramPeriod& period,
                                                   const BaselineCheckpoints& checkpoints, SettingsAhead& ahead,
                                                   const std::function<void(std::size_t, const Evaluation&)>& arrived) {
  // Longest replays first (settings run the whole trace; a placement from its first cleanup
  // on), so that the workers finish together instead of one waiting on a long last one.
  std::vector<std::size_t> order;
  std::vector<std::vector<std::size_t>> shared(cands.size());  // the other candidates a run serves
  for (std::size_t i = 0; i < cands.size(); ++i) {
    if (same_run[i] == i)
      order.push_back(i);
    else
      shared[same_run[i]].push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    const std::uint32_t fx = cands[x].settings ? 0 : cands[x].first_op, fy = cands[y].settings ? 0 : cands[y].first_op;
    return fx < fy;
  });
  std::vector<std::optional<Evaluation>> results(cands.size());
  std::atomic<std::size_t> next{0}, done{0};
  std::mutex progress_mutex;
  std::vector<std::size_t> from_ahead;  // settings candidates the ahead thread had started
  // Records candidate i's evaluation (and the candidates its run serves) and reports them.
  auto deliver = [&](std::size_t i, Evaluation ev) {
    ev.at_point = probeValue(ev.run);
    for (std::size_t other : shared[i]) results[other] = ev;
    results[i] = std::move(ev);
    std::lock_guard<std::mutex> lock(progress_mutex);
    for (std::size_t served : shared[i]) {
      const std::size_t d = ++done;
      if (arrived) arrived(served, *results[served]);
      if (o.progress) o.progress(d, cands.size());
    }
    const std::size_t d = ++done;
    if (arrived) arrived(i, *results[i]);
    if (o.progress) o.progress(d, cands.size());
  };
  auto worker = [&] {
    for (std::size_t n = next++; n < order.size(); n = next++) {
      if (o.cancel && o.cancel->load()) return;
      const std::size_t i = order[n];
      const Candidate& c = cands[i];
      Evaluation ev;
      if (c.settings) {
        if (!ahead.claim(c.settings_index)) {
          std::lock_guard<std::mutex> lock(progress_mutex);
          from_ahead.push_back(i);
          continue;
        }
        ev.run = ahead.replay(c.settings_index);
      } else {
        const detail::Runner* from = checkpoints.before(c.first_op);
        detail::Runner r(from ? *from : detail::Runner(p, observe, base));
        r.addEdit(c.edits.front(), c.ops);
        r.skipRepeats(period);
        while (!r.done() && !cancelledAt(o, r.nextOp())) r.step();
        r.finish();
        ev.run = r.takeResult();
      }
      if (o.cancel && o.cancel->load()) return;  // an incomplete run is no result
      deliver(i, std::move(ev));
    }
  };
  runOnThreads(jobsOf(o), worker);
  ahead.finish();
  std::sort(from_ahead.begin(), from_ahead.end());
  for (std::size_t i : from_ahead) {
    auto run = ahead.take(cands[i].settings_index);
    if (!run || (o.cancel && o.cancel->load())) break;  // an incomplete run is no result
    deliver(i, Evaluation{std::move(*run), std::nullopt});
  }
  return results;
}

}  // namespace

Expected<SweepReport> runSweep(const PreparedTrace& p, const SweepOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  SweepReport rep;
  rep.objective_spec = o.objective;
  rep.objective = o.objective.description();
  // Every candidate runs on the edited run's device (the same one `whatif` would choose).
  const auto chosen = chooseEditedRun(p, o);
  if (!chosen) return chosen.status();
  const EditedRun& device = *chosen;
  RunSettings base = device.edited();
  base.figures_at_edits = false;  // a candidate is scored without them (scoreCandidate)
  std::vector<ResolvedEdit> observe;
  // A cancel is looked at between the passes over the trace that come before the replays.
  const auto cancelled = [&] {
    rep.cancelled = o.cancel && o.cancel->load();
    return rep.cancelled;
  };
  if (Status s = setUpObjective(p, o.objective, observe, base); !s.ok()) return s;
  if (cancelled()) return rep;
  // The settings candidates are few: keep them, and cut the placements to make room. Their runs
  // start now, beside the search for placements and the baseline (SettingsAhead).
  std::vector<Candidate> settings;
  if (o.try_settings) addSettingsCandidates(device, settings);
  if (settings.size() > o.max_candidates) settings.resize(o.max_candidates);
  // Runs go on whole training steps where their state repeats (the program's period, found once).
  const detail::ProgramPeriod period = o.skip_repeats ? detail::findProgramPeriod(p.program) : detail::ProgramPeriod{};
  SettingsAhead ahead(p, observe, withCancel(base, o.cancel), configsOf(settings), jobsOf(o) > 1 && o.slices <= 1,
                      &period);
  chooseCap(p, o, rep);
  if (cancelled()) return rep;
  std::vector<Candidate> cands;
  std::set<std::vector<std::uint32_t>> seen;
  addRegionCandidates(p, o, cands, seen);
  if (cancelled()) return rep;
  addAnnotationCandidates(p, cands, seen);
  const std::size_t room = o.max_candidates > settings.size() ? o.max_candidates - settings.size() : 0;
  if (cands.size() > room) cands.resize(room);
  for (auto& c : settings) cands.push_back(std::move(c));  // they fit: `settings` was cut to max_candidates
  keepSlice(o, cands);

  // One baseline pass with checkpoints; each placement then resumes from the checkpoint
  // before its first cleanup instead of replaying from the start.
  BaselineCheckpoints checkpoints(cands, std::max<std::uint32_t>(o.checkpoint_every, 1), p.program.ops.size());
  detail::Runner runner(p, observe, base);
  while (!runner.done()) {
    if (cancelledAt(o, runner.nextOp())) {
      rep.cancelled = true;  // no baseline: nothing to score candidates against
      return rep;
    }
    checkpoints.offer(runner, runner.nextOp());
    runner.step();
  }
  runner.finish();
  const RunResult& b = runner.result();
  rep.baseline_peak_reserved = b.peak_reserved.bytes;
  rep.baseline_peak_allocated = b.peak_allocated.bytes;
  rep.baseline_reserved_at_point = probeValue(b);
  rep.baseline_objective = objectiveValue(o.objective, b);

  // Each result as it arrives (the GUI fills its table), scored as the final ranking scores it.
  std::function<void(std::size_t, const Evaluation&)> arrived;
  if (o.on_candidate)
    arrived = [&](std::size_t i, const Evaluation& ev) { o.on_candidate(scoreCandidate(cands[i], ev, b, o, rep)); };
  const std::vector<std::size_t> same_run = sameRunAs(p, cands, observe);
  const auto results = evaluateAll(p, o, cands, same_run, observe, base, period, checkpoints, ahead, arrived);
  for (std::size_t i = 0; i < cands.size(); ++i) {
    if (!results[i]) {
      rep.cancelled = true;
      continue;
    }
    if (same_run[i] == i) {
      ++rep.replays;
      rep.steps_skipped += results[i]->run.periods_skipped;
    }
    rep.candidates.push_back(scoreCandidate(cands[i], *results[i], b, o, rep));
  }
  rep.evaluated = rep.candidates.size();
  std::stable_sort(rep.candidates.begin(), rep.candidates.end(), sweepRanksBefore);
  markPareto(rep);
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

SweepReport mergeSweepSlices(const std::vector<SweepReport>& slices) {
  if (slices.empty()) return {};
  SweepReport rep = slices.front();
  rep.candidates.clear();
  rep.pareto.clear();
  rep.evaluated = 0;
  rep.replays = 0;
  rep.seconds = 0;
  for (const auto& s : slices) {
    rep.candidates.insert(rep.candidates.end(), s.candidates.begin(), s.candidates.end());
    rep.evaluated += s.evaluated;
    rep.replays += s.replays;
    rep.steps_skipped += s.steps_skipped;
    rep.seconds += s.seconds;
    rep.cancelled = rep.cancelled || s.cancelled;
  }
  // Each slice is ranked; ties keep the slices' order, as one run would.
  std::stable_sort(rep.candidates.begin(), rep.candidates.end(), sweepRanksBefore);
  markPareto(rep);
  return rep;
}

namespace {

// The report-wide facts of several traces' sweeps: the worst baseline, the tightest cap.
void worstBaselines(const std::vector<SweepReport>& per_trace, SweepReport& rep) {
  const SweepReport& first = per_trace.front();
  rep.objective_spec = first.objective_spec;
  rep.objective = first.objective;
  rep.steps = first.steps;
  for (const SweepReport& r : per_trace) {
    if (!r.max_calls && !rep.max_calls) rep.max_calls_source = r.max_calls_source;
    rep.baseline_peak_reserved = std::max(rep.baseline_peak_reserved, r.baseline_peak_reserved);
    rep.baseline_peak_allocated = std::max(rep.baseline_peak_allocated, r.baseline_peak_allocated);
    rep.baseline_objective = std::max(rep.baseline_objective, r.baseline_objective);
    if (r.baseline_reserved_at_point)
      rep.baseline_reserved_at_point =
          std::max(rep.baseline_reserved_at_point.value_or(0), *r.baseline_reserved_at_point);
    if (r.max_calls && (!rep.max_calls || *r.max_calls < *rep.max_calls)) {  // the tightest cap decides
      rep.max_calls = r.max_calls;
      rep.max_calls_source = r.max_calls_source;
      rep.steps = r.steps;
    }
    rep.seconds += r.seconds;
    rep.cancelled = rep.cancelled || r.cancelled;
  }
}

std::optional<std::int64_t> maxOf(const std::optional<std::int64_t>& a, const std::optional<std::int64_t>& b) {
  if (!a) return b;
  if (!b) return a;
  return std::max(*a, *b);
}

// What a trace does without any candidate: its baseline, as a candidate that changes nothing.
SweepCandidate baselineCandidate(const SweepReport& trace) {
  SweepCandidate base;
  base.peak_reserved = trace.baseline_peak_reserved;
  base.peak_allocated = trace.baseline_peak_allocated;
  base.reserved_at_point = trace.baseline_reserved_at_point;
  base.objective_value = trace.baseline_objective;
  return base;
}

// One candidate on one more trace: `c` is that trace's run of it, or the trace's baseline when
// the trace did not make it (`made` false); `first`: the first trace.
void worsen(SweepCandidate& into, const SweepCandidate& c, bool made, bool first) {
  if (first) {
    auto edits = std::move(into.edits);
    auto changes = std::move(into.changes);
    into = c;
    into.edits = std::move(edits);
    into.changes = std::move(changes);
    into.pareto = false;
    return;
  }
  into.peak_reserved = std::max(into.peak_reserved, c.peak_reserved);
  into.peak_allocated = std::max(into.peak_allocated, c.peak_allocated);
  into.reserved_at_point = maxOf(into.reserved_at_point, c.reserved_at_point);
  into.peak_in = maxOf(into.peak_in, c.peak_in);
  into.objective_value = std::max(into.objective_value, c.objective_value);
  if (!made) return;
  if (into.description.empty()) {  // the first trace did not make it
    into.description = c.description;
    into.settings = c.settings;
    into.depth = c.depth;
  }
  into.oom = into.oom || c.oom;
  into.empty_cache_calls = std::max(into.empty_cache_calls, c.empty_cache_calls);
  if (c.calls_per_step) into.calls_per_step = std::max(into.calls_per_step.value_or(0.0), *c.calls_per_step);
  into.price_seconds = std::max(into.price_seconds, c.price_seconds);
  if (c.price_per_step_seconds)
    into.price_per_step_seconds = std::max(into.price_per_step_seconds.value_or(0.0), *c.price_per_step_seconds);
  into.mean_reserved = std::max(into.mean_reserved, c.mean_reserved);
}

}  // namespace

std::string_view candidateChangeKindName(CandidateChange::Kind kind) {
  return kind == CandidateChange::Kind::kSettings ? "settings" : "cleanup";
}

std::vector<std::string> changeFlags(const std::vector<CandidateChange>& changes) {
  std::vector<std::string> flags;
  for (const auto& ch : changes) {
    if (ch.kind == CandidateChange::Kind::kCleanup) {
      flags.insert(flags.end(), {"--cleanup", ch.point});
    } else {
      flags.insert(flags.end(), {"--set", ch.settings});
    }
  }
  return flags;
}

SweepReport worstOverTraces(const std::vector<SweepReport>& per_trace) {
  if (per_trace.empty()) return {};
  if (per_trace.size() == 1) return per_trace.front();
  SweepReport rep;
  worstBaselines(per_trace, rep);
  std::vector<std::vector<std::string>> keys;  // each candidate's flags, in the order first made
  std::set<std::vector<std::string>> known;
  std::vector<std::map<std::vector<std::string>, const SweepCandidate*>> by_key(per_trace.size());
  std::vector<SweepCandidate> baselines;
  for (std::size_t t = 0; t < per_trace.size(); ++t) {
    baselines.push_back(baselineCandidate(per_trace[t]));
    for (const auto& c : per_trace[t].candidates) {
      by_key[t].emplace(c.edits, &c);
      if (known.insert(c.edits).second) keys.push_back(c.edits);
    }
  }
  for (const auto& key : keys) {
    SweepCandidate c;
    c.edits = key;
    for (std::size_t t = 0; t < per_trace.size() && c.changes.empty(); ++t)
      if (const auto it = by_key[t].find(key); it != by_key[t].end()) c.changes = it->second->changes;
    for (std::size_t t = 0; t < per_trace.size(); ++t) {
      const auto it = by_key[t].find(key);
      const bool made = it != by_key[t].end();
      worsen(c, made ? *it->second : baselines[t], made, t == 0);
    }
    c.saving = rep.baseline_objective - c.objective_value;
    c.within_cap = !rep.max_calls || c.empty_cache_calls <= *rep.max_calls;  // the report's cap, the tightest
    rep.candidates.push_back(std::move(c));
  }
  rep.evaluated = rep.candidates.size();
  for (const SweepReport& t : per_trace) {
    rep.replays += t.replays;
    rep.steps_skipped += t.steps_skipped;
  }
  std::stable_sort(rep.candidates.begin(), rep.candidates.end(), sweepRanksBefore);
  markPareto(rep);
  return rep;
}

}  // namespace reservoir::replay
