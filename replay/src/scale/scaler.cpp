// The Scaler: inputs prepared once, request keys, the template choice, alignment and the fit.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <unordered_map>

#include "laws.h"
#include "reservoir/replay/export.h"
#include "reservoir/replay/scale.h"

namespace reservoir::replay::scale {
namespace {

constexpr std::uint64_t kFnvOffset = 1469598103934665603ull;
constexpr std::uint64_t kFnvPrime = 1099511628211ull;

std::uint64_t mix(std::uint64_t h, std::string_view s) {
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * kFnvPrime;
  return (h ^ 0xffu) * kFnvPrime;
}

// A key per malloc op: the allocation stack's frames (file, line, function) and whether it
// is on the default stream. Stack ids differ between snapshots; the frames' text does not.
std::vector<std::uint64_t> requestKeys(const PreparedTrace& p, std::vector<std::uint32_t>* ops) {
  const traces::Snapshot& snap = *p.snapshot;
  std::unordered_map<std::uint32_t, std::uint64_t> by_stack;
  auto stackKey = [&](StackId id) {
    auto it = by_stack.find(id.value());
    if (it != by_stack.end()) return it->second;
    std::uint64_t h = kFnvOffset;
    if (id.valid() && id.value() < snap.stackCount())
      for (FrameId f : snap.stack(id)) {
        const auto& fr = snap.frames[f.value()];
        h = mix(mix(mix(h, snap.str(fr.filename)), std::to_string(fr.line)), snap.str(fr.name));
      }
    by_stack.emplace(id.value(), h);
    return h;
  };
  std::vector<std::uint64_t> keys;
  for (std::uint32_t i = 0; i < p.program.ops.size(); ++i) {
    const Op& op = p.program.ops[i];
    if (op.kind != OpKind::kMalloc) continue;
    keys.push_back(stackKey(p.opStack(op)) ^ (streamOf(p.program, op) == 0 ? 0 : 0x9e3779b97f4a7c15ull));
    ops->push_back(i);
  }
  return keys;
}

double distance(const Params& a, const Params& b) {
  double d = 0;
  for (const auto& [k, v] : b) {
    auto it = a.find(k);
    if (it == a.end() || it->second == v) continue;
    if (it->second > 0 && v > 0)
      d += std::fabs(std::log(static_cast<double>(it->second)) - std::log(static_cast<double>(v)));
    else
      d += 1.0;
  }
  return d;
}

std::size_t nearestInput(const std::vector<Input>& inputs, const Params& target) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < inputs.size(); ++i)
    if (distance(inputs[i].params, target) < distance(inputs[best].params, target)) best = i;
  return best;
}

// Notes on what the inputs cannot show about the target.
void addCoverageNotes(const std::vector<Input>& inputs, const Params& target, ScaleModel& m) {
  std::vector<detail::Point> shapes;
  for (const auto& in : inputs) shapes.push_back({&in.params, 0});
  const bool several = detail::severalParametersVary(shapes);
  for (const auto& [name, value] : target) {
    std::set<std::int64_t> seen;
    for (const auto& in : inputs) seen.insert(in.params.at(name));
    if (seen.size() == 1 && *seen.begin() != value)
      m.notes.push_back(
          fmt::format("no two inputs differ in '{}': requests whose size depends on it keep the inputs' "
                      "size ({} -> {})",
                      name, *seen.begin(), value));
    else if (value < *seen.begin() || value > *seen.rbegin())
      m.notes.push_back(fmt::format("'{}' = {} is extrapolated (the inputs span {} to {})", name, value, *seen.begin(),
                                    *seen.rbegin()));
    if (name == "world" && value > *seen.rbegin() && !several)  // with several, the laws place the padding
      m.notes.push_back(
          fmt::format("FSDP2 pads each parameter's dim 0 to a multiple of the world size: the shard laws "
                      "assume world = {} divides it (no parameter shapes are recorded); where it does not, "
                      "shards and all-gather buffers are larger by the padding",
                      value));
  }
}

// Diff "sliders": where one stream has a request fewer in a run of requests with the same key
// (a batch of 1 skips a contiguous copy of the embedding's input), the key alone leaves open
// which one is missing. Each gap slides along its run to where the matched sizes are closest.
std::vector<std::int64_t> sizesOf(const PreparedTrace& p, const std::vector<std::uint32_t>& ops) {
  std::vector<std::int64_t> out;
  out.reserve(ops.size());
  for (auto op : ops) out.push_back(static_cast<std::int64_t>(p.program.ops[op].size));
  return out;
}

double sizeDistance(std::int64_t a, std::int64_t b) {
  return std::fabs(std::log(static_cast<double>(std::max<std::int64_t>(a, 1))) -
                   std::log(static_cast<double>(std::max<std::int64_t>(b, 1))));
}

bool slideOnce(std::vector<std::int64_t>& match, const std::vector<std::uint64_t>& tk,
               const std::vector<std::int64_t>& ts, const std::vector<std::uint64_t>& ik,
               const std::vector<std::int64_t>& is) {
  bool changed = false;
  std::vector<bool> used(ik.size(), false);
  for (auto j : match)
    if (j >= 0) used[static_cast<std::size_t>(j)] = true;
  for (std::size_t t = 0; t < match.size(); ++t) {
    if (match[t] < 0) {  // a template request without a match: take a same-key neighbour's if closer
      for (std::size_t n : {t - 1, t + 1}) {
        if (n >= match.size() || match[n] < 0 || tk[n] != tk[t]) continue;
        const auto j = static_cast<std::size_t>(match[n]);
        if (sizeDistance(ts[t], is[j]) < sizeDistance(ts[n], is[j])) {
          match[t] = match[n], match[n] = -1, changed = true;
          break;
        }
      }
      continue;
    }
    const auto j = static_cast<std::size_t>(match[t]);  // an input request left out beside this match
    for (std::size_t n : {j - 1, j + 1}) {
      if (n >= is.size() || used[n] || ik[n] != ik[j]) continue;
      if (sizeDistance(ts[t], is[n]) < sizeDistance(ts[t], is[j])) {
        used[j] = false, used[n] = true, match[t] = static_cast<std::int64_t>(n), changed = true;
        break;
      }
    }
  }
  return changed;
}

void slideGaps(std::vector<std::int64_t>& match, const std::vector<std::uint64_t>& tk,
               const std::vector<std::int64_t>& ts, const std::vector<std::uint64_t>& ik,
               const std::vector<std::int64_t>& is) {
  if (tk.size() == ik.size() && std::all_of(match.begin(), match.end(), [](auto j) { return j >= 0; })) return;
  for (int round = 0; round < 64 && slideOnce(match, tk, ts, ik, is); ++round) {
  }
}

// Every request's law. Where the inputs differ in one parameter, today's laws of one variable;
// where several vary, sums of terms in several parameters, solved exactly (terms.cpp), with the
// dims 0 FSDP2 pads learned from the requests themselves. Laws are fitted once per distinct
// pattern of sizes (a model's layers repeat them).
void fitLaws(ScaleModel& m, const std::vector<std::string>& variables, const std::vector<Input>& inputs) {
  std::vector<detail::Point> points;  // one request's (reused: a million requests make no million vectors)
  const auto pointsOf = [&](const RequestFit& f) -> const std::vector<detail::Point>& {
    points.clear();
    for (std::size_t i = 0; i < f.sizes.size(); ++i)
      if (f.sizes[i] >= 0) points.push_back({&inputs[i].params, f.sizes[i]});
    return points;
  };
  std::vector<detail::Point> shapes;  // the inputs' parameters: do they vary in several at all?
  for (const auto& in : inputs) shapes.push_back({&in.params, 0});
  const bool several = detail::severalParametersVary(shapes);
  std::vector<std::int64_t> dims;
  std::map<std::vector<std::int64_t>, bool> seen;
  for (const auto& f : m.requests) {
    if (!several) break;
    if (!detail::severalParametersVary(pointsOf(f)) || !seen.emplace(f.sizes, true).second) continue;
    for (auto d : detail::paddedDims(points)) dims.push_back(d);
  }
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  const auto terms = several ? detail::lawTerms(inputs, dims) : std::vector<LawTerm>{};
  std::map<std::vector<std::int64_t>, Law> cache;
  for (auto& f : m.requests) {
    f.law = detail::fitLaw(pointsOf(f), variables);
    if (several && f.law.kind != LawKind::kConstant && detail::severalParametersVary(points)) {
      auto it = cache.find(f.sizes);
      if (it == cache.end()) it = cache.emplace(f.sizes, detail::fitTerms(points, terms, m.target, inputs)).first;
      f.law = it->second;
    }
    if (f.law.kind == LawKind::kUnexplained) f.law.basis = {{0, f.sizes[m.template_input]}};
  }
}

}  // namespace

Expected<Scaler> Scaler::create(std::vector<Input> inputs, const ScaleOptions& options) {
  if (inputs.empty()) return Status::error("no inputs to scale from: at least one capture is needed");
  Scaler s;
  s.options_ = options;
  for (const auto& in : inputs) {
    if (!in.snapshot) return Status::error(in.name + ": no snapshot");
    auto p = prepareTrace(in.snapshot, in.device_index, in.env);
    if (!p) return Status::error(fmt::format("{}: {}", in.name, p.message()));
    auto shared = std::make_shared<PreparedTrace>(std::move(*p));
    s.malloc_ops_.emplace_back();
    s.keys_.push_back(requestKeys(*shared, &s.malloc_ops_.back()));
    s.sizes_.push_back(sizesOf(*shared, s.malloc_ops_.back()));
    s.prepared_.push_back(std::move(shared));
  }
  s.inputs_ = std::move(inputs);
  return s;
}

// Inputs that are not the template's program everywhere (world 1 takes other code paths, a
// batch of 1 skips a copy): how many requests have no match, and where most of them come from.
std::string Scaler::programNote(std::size_t i, std::size_t t, const std::vector<std::int64_t>& match,
                                std::size_t matched) const {
  std::vector<bool> used(keys_[i].size(), false);
  for (auto j : match)
    if (j >= 0) used[static_cast<std::size_t>(j)] = true;
  std::map<std::string, std::size_t> where;
  const PreparedTrace& p = *prepared_[i];
  for (std::size_t j = 0; j < used.size(); ++j)
    if (!used[j]) ++where[describeStack(*p.snapshot, p.opStack(p.program.ops[malloc_ops_[i][j]]), 1)];
  std::string top;
  std::size_t top_count = 0;
  for (const auto& [k, v] : where)
    if (v > top_count) top = k, top_count = v;
  return fmt::format(
      "{}: {} of its {} requests have no match in {} and {} of the template's none in it (not the same program there; "
      "the template's requests keep laws fitted without it){}",
      inputs_[i].name, keys_[i].size() - matched, keys_[i].size(), inputs_[t].name, keys_[t].size() - matched,
      top.empty() ? "" : fmt::format("; {} of them from {}", top_count, top));
}

Expected<ScaleModel> Scaler::fit(const Params& target_in) const {
  auto target = completeTarget(inputs_, target_in);
  if (!target) return target.status();
  ScaleModel m;
  m.target = *target;
  m.template_input = nearestInput(inputs_, m.target);
  const std::size_t t = m.template_input;
  const std::size_t n = inputs_.size();
  // matches[i][r]: the malloc of input i matching the template's r-th malloc, or -1.
  std::vector<std::vector<std::int64_t>> matches(n);
  m.unmatched_per_input.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (i == t) continue;
    auto a = alignSequences(keys_[t], keys_[i], options_.max_edit_distance);
    if (!a) return Status::error(fmt::format("aligning {} with {}: {}", inputs_[i].name, inputs_[t].name, a.message()));
    matches[i] = std::move(*a);
    slideGaps(matches[i], keys_[t], sizes_[t], keys_[i], sizes_[i]);
    std::size_t matched = 0;
    for (auto v : matches[i]) matched += v >= 0;
    m.unmatched_per_input[i] = keys_[i].size() - matched;
    if (2 * matched < std::max(keys_[i].size(), keys_[t].size()))
      return Status::error(
          fmt::format("{} and {} are not the same program: only {} of their {} and {} requests align "
                      "by stack and order",
                      inputs_[i].name, inputs_[t].name, matched, keys_[i].size(), keys_[t].size()));
    if (matched < keys_[i].size() || matched < keys_[t].size())
      m.notes.push_back(programNote(i, t, matches[i], matched));
  }
  const auto variables = detail::lawVariables(inputs_);
  const auto& tops = prepared_[t]->program.ops;
  m.requests.reserve(keys_[t].size());
  for (std::size_t r = 0; r < keys_[t].size(); ++r) {
    RequestFit f;
    f.op = malloc_ops_[t][r];
    f.stack = prepared_[t]->opStack(tops[f.op]);
    f.sizes.assign(n, -1);
    bool everywhere = true;
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t j = i == t ? static_cast<std::int64_t>(r) : matches[i][r];
      if (j < 0) {
        everywhere = false;
        continue;
      }
      const auto& op = prepared_[i]->program.ops[malloc_ops_[i][static_cast<std::size_t>(j)]];
      f.sizes[i] = static_cast<std::int64_t>(op.size);
    }
    m.matched_everywhere += everywhere;
    m.requests.push_back(std::move(f));
  }
  fitLaws(m, variables, inputs_);
  std::map<std::pair<LawKind, std::string>, std::size_t> by_class;
  detail::Int128 total = 0;
  for (auto& f : m.requests) {
    bool exact = true;
    f.predicted = f.law.evaluate(m.target, &exact);
    if (f.predicted > kMaxRequestBytes)
      return Status::usage(fmt::format(
          "at {} a request of {} is predicted to need more than {} bytes (1 TiB), more than any GPU's memory "
          "({}): no device runs this target",
          paramsText(m.target), describeStack(*inputs_[t].snapshot, f.stack, 1), kMaxRequestBytes, f.law.describe()));
    total += f.predicted;  // each at most 2^40 + 1, so no overflow in 128 bits
    m.inexact += !exact && f.law.determined;
    m.undetermined += !f.law.determined;
    ++by_class[{f.law.kind, f.law.kind == LawKind::kTerms ? f.law.className() : f.law.variable}];
  }
  if (total > detail::Int128{kMaxRequestBytes} * 128)  // the synthesized trace would not fit a GPU's address space
    return Status::usage(fmt::format("at {} the predicted requests add up to {:.3g} bytes, more than 128 TiB: no device runs "
                                     "this target",
                                     paramsText(m.target), static_cast<long double>(total)));
  for (const auto& [k, count] : by_class) {  // named once per class, not per request
    Law named;
    named.kind = k.first, named.variable = k.second;
    m.laws[k.first == LawKind::kTerms ? k.second : named.className()] += count;
  }
  addCoverageNotes(inputs_, m.target, m);
  if (m.undetermined)
    m.notes.push_back(fmt::format(
        "{} sizes at the target rest on a guess: the inputs cannot tell them (each request class is listed with the "
        "capture that would settle it); the prediction is not exact",
        m.undetermined));
  if (m.inexact)
    m.notes.push_back(
        fmt::format("{} sizes are not whole at the target (a shard whose dim 0 the target's world does not "
                    "divide is rounded up, as FSDP2's padding does; its row size is unknown)",
                    m.inexact));
  return m;
}

Expected<ScaledTrace> Scaler::synthesize(const ScaleModel& model) const {
  if (model.template_input >= prepared_.size()) return Status::error("scale model from another Scaler");
  const PreparedTrace& tp = *prepared_[model.template_input];
  PreparedTrace p = tp;
  for (const auto& f : model.requests) {
    if (f.op >= p.program.ops.size()) return Status::error("scale model from another Scaler");
    Op& op = p.program.ops[f.op];
    op.size = static_cast<sim::ByteCount>(f.predicted);
    op.recorded_oom = false;
  }
  p.recorded_segments_by_size.clear();
  p.derived_capacity.reset();
  RunSettings settings;
  settings.config = tp.recorded_config;
  settings.fraction = 1.0;
  settings.address_model = AddressModel::kDriver;
  auto snap = exportRun(p, {}, settings);
  if (!snap) return snap.status();
  ScaledTrace out;
  out.snapshot = std::make_shared<const traces::Snapshot>(std::move(*snap));
  out.device_index = tp.device_index;
  // The template's total, unless it was only assumed: then the predicted trace's is assumed too.
  if (!tp.conformance.total_memory_source.empty()) out.env.total_memory = tp.total_memory;
  out.env.fraction = tp.fraction;
  out.env.settings = inputs_[model.template_input].env.settings;
  return out;
}

Expected<Comparison> Scaler::compare(const ScaleModel& model, const Input& measured) const {
  if (!measured.snapshot) return Status::error(measured.name + ": no snapshot");
  auto p = prepareTrace(measured.snapshot, measured.device_index, measured.env);
  if (!p) return Status::error(fmt::format("{}: {}", measured.name, p.message()));
  std::vector<std::uint32_t> ops;
  const auto keys = requestKeys(*p, &ops);
  const std::size_t t = model.template_input;
  auto match = alignSequences(keys_[t], keys, options_.max_edit_distance);
  if (!match)
    return Status::error(fmt::format("aligning {} with {}: {}", measured.name, inputs_[t].name, match.message()));
  std::vector<std::int64_t> predicted;  // the gaps slide to where the predicted sizes meet the measured ones
  predicted.reserve(model.requests.size());
  for (const auto& f : model.requests) predicted.push_back(f.predicted);
  slideGaps(*match, keys_[t], predicted, keys, sizesOf(*p, ops));
  Comparison c;
  std::map<std::pair<std::string, std::string>, MissClass> classes;
  std::size_t matched = 0;
  for (std::size_t r = 0; r < model.requests.size() && r < match->size(); ++r) {
    const std::int64_t j = (*match)[r];
    if (j < 0) {
      ++c.only_predicted;
      continue;
    }
    ++matched;
    ++c.compared;
    const auto& f = model.requests[r];
    const auto got = static_cast<std::int64_t>(p->program.ops[ops[static_cast<std::size_t>(j)]].size);
    if (got == f.predicted) {
      ++c.equal;
      continue;
    }
    std::string where = describeStack(*inputs_[t].snapshot, f.stack, 2);
    if (const auto more = where.find(" <- ... ("); more != std::string::npos)
      where.resize(more);  // the class, not the depth
    auto& mc = classes[{where, f.law.className()}];
    if (mc.count == 0) {
      mc.where = where, mc.law = f.law.className();
      mc.example_predicted = f.predicted, mc.example_measured = got;
    }
    ++mc.count;
    mc.bytes += f.predicted - got;
  }
  c.only_measured = keys.size() - matched;
  for (auto& [k, v] : classes) c.misses.push_back(std::move(v));
  std::sort(c.misses.begin(), c.misses.end(),
            [](const MissClass& a, const MissClass& b) { return std::llabs(a.bytes) > std::llabs(b.bytes); });
  return c;
}

Expected<ScaledTrace> scaleTrace(const std::vector<Input>& inputs, const Params& target, ScaleModel* model_out,
                                 const ScaleOptions& options) {
  auto scaler = Scaler::create(inputs, options);
  if (!scaler) return scaler.status();
  auto model = scaler->fit(target);
  if (!model) return model.status();
  auto trace = scaler->synthesize(*model);
  if (trace && model_out) *model_out = std::move(*model);
  return trace;
}

}  // namespace reservoir::replay::scale
