// reservoir scale: parameters and grids, fitted laws, alignment, and predictions of the
// shared scale set (../shared/traces/scale) against the measured traces replayed alike.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <initializer_list>
#include <limits>

#include "cli_runner.h"
#include "reservoir/replay/scale.h"
#include "reservoir/replay/session.h"
#include "reservoir/replay/trace.h"
#include "reservoir/traces/reader.h"
#include "reservoir/traces/writer.h"
#include "scale/laws.h"
#include "test_paths.h"

namespace reservoir::replay::scale {
namespace {

TEST(ScaleParams, ParsesValuesAndGrids) {
  auto p = parseParams("world=2,seq=4096");
  ASSERT_TRUE(p.ok()) << p.message();
  EXPECT_EQ(p->at("world"), 2);
  EXPECT_EQ(p->at("seq"), 4096);
  auto g = parseGrid("world=8,16,32,seq=1024,2048");
  ASSERT_TRUE(g.ok()) << g.message();
  ASSERT_EQ(g->size(), 6u);
  EXPECT_EQ((*g)[0].at("world"), 8);
  EXPECT_EQ((*g)[1].at("seq"), 2048);
  EXPECT_EQ((*g)[5].at("world"), 32);
  EXPECT_FALSE(parseParams("world=2,4").ok());  // a list is a grid, not one target
  EXPECT_FALSE(parseParams("world=x").ok());
  EXPECT_FALSE(parseParams("4096").ok());
  EXPECT_FALSE(parseGrid("world=2,world=4").ok());
  EXPECT_EQ(paramsText(*p), "seq=4096,world=2");
}

TEST(ScaleParams, TargetTakesTheInputsCommonValues) {
  std::vector<Input> in(2);
  in[0].params = {{"world", 2}, {"seq", 4096}};
  in[1].params = {{"world", 4}, {"seq", 4096}};
  auto t = completeTarget(in, {{"world", 8}});
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(t->at("seq"), 4096);
  EXPECT_FALSE(completeTarget(in, {{"seq", 8192}}).ok());  // world differs: the target must name it
  EXPECT_FALSE(completeTarget(in, {{"heads", 8}}).ok());   // no input has it
  EXPECT_FALSE(completeTarget(in, {{"world", 0}}).ok());
}

std::vector<detail::Point> points(const std::vector<Params>& ps, const std::vector<std::int64_t>& sizes) {
  std::vector<detail::Point> out;
  for (std::size_t i = 0; i < ps.size(); ++i) out.push_back({&ps[i], sizes[i]});
  return out;
}

const std::vector<std::string> kVars = {"tokens", "world", "seq", "batch"};

TEST(ScaleLaws, ConstantAffineShardQuadratic) {
  const std::vector<Params> worlds = {{{"world", 2}, {"seq", 4096}, {"batch", 2}},
                                      {{"world", 4}, {"seq", 4096}, {"batch", 2}}};
  // An FSDP2 shard of a 1024-row fp32 parameter plus a fixed header: c + K / world.
  auto shard = detail::fitLaw(points(worlds, {296 + 49152 / 2, 296 + 49152 / 4}), kVars);
  EXPECT_EQ(shard.kind, LawKind::kShard);
  bool shard_exact = false;
  EXPECT_EQ(shard.evaluate({{"world", 32}}, &shard_exact), 296 + 49152 / 32);
  EXPECT_TRUE(shard_exact);
  // Past divisibility the shard rounds up (padding) and says it is not exact.
  EXPECT_EQ(shard.evaluate({{"world", 5}}, &shard_exact), 296 + (49152 + 4) / 5);
  EXPECT_FALSE(shard_exact);

  const std::vector<Params> seqs = {{{"world", 4}, {"seq", 2048}, {"batch", 2}},
                                    {{"world", 4}, {"seq", 4096}, {"batch", 2}}};
  auto affine = detail::fitLaw(points(seqs, {83455 - 66560 / 2, 83455}), kVars);
  ASSERT_EQ(affine.kind, LawKind::kAffine);
  EXPECT_EQ(affine.variable, "tokens");
  EXPECT_EQ(affine.evaluate({{"seq", 8192}, {"batch", 2}}), 83455 + 66560);
  EXPECT_EQ(affine.evaluate({{"seq", 16384}, {"batch", 1}}), 83455 + 66560);  // same tokens

  auto constant = detail::fitLaw(points(seqs, {4096, 4096}), kVars);
  EXPECT_EQ(constant.kind, LawKind::kConstant);
  EXPECT_EQ(constant.evaluate({{"seq", 1 << 20}}), 4096);

  // Two points never make a quadratic; three that are not on a line do.
  const std::vector<Params> three = {{{"seq", 1}}, {{"seq", 2}}, {{"seq", 3}}};
  auto quad = detail::fitLaw(points(three, {10, 40, 90}), {"tokens"});
  ASSERT_EQ(quad.kind, LawKind::kQuadratic);
  EXPECT_EQ(quad.evaluate({{"seq", 10}}), 1000);
  // Past the exact range (values over 2^31) the law is evaluated in floating point and says so.
  const std::int64_t big = (std::int64_t{1} << 31) + 2;
  const std::vector<Params> millions = {{{"seq", 1000000}}, {{"seq", 2000000}}, {{"seq", 3000000}}};
  auto gentle = detail::fitLaw(points(millions, {1000001, 2000004, 3000009}), {"tokens"});  // x + (x / 10^6)^2
  ASSERT_EQ(gentle.kind, LawKind::kQuadratic);
  bool exact = true;
  const auto g = gentle.evaluate({{"seq", big}}, &exact);
  EXPECT_FALSE(exact);
  const double x = static_cast<double>(big);
  EXPECT_NEAR(static_cast<double>(g) / (x + (x / 1e6) * (x / 1e6)), 1.0, 1e-9);
  // A size past 1 TiB (more than any GPU has) is out of range, never a wrapped or clamped size.
  auto square = detail::fitLaw(points(three, {1, 4, 9}), {"tokens"});
  ASSERT_EQ(square.kind, LawKind::kQuadratic);
  const auto v = square.evaluate({{"seq", big + 2}}, &exact);
  EXPECT_FALSE(exact);
  EXPECT_EQ(v, kMaxRequestBytes + 1);
  const std::vector<Params> four = {{{"seq", 1}}, {{"seq", 2}}, {{"seq", 3}}, {{"seq", 4}}};
  EXPECT_EQ(detail::fitLaw(points(four, {10, 40, 90, 170}), {"tokens"}).kind, LawKind::kUnexplained);
  // A size that is not a function of any parameter is unexplained.
  const std::vector<Params> same = {{{"seq", 1}}, {{"seq", 1}}};
  EXPECT_EQ(detail::fitLaw(points(same, {10, 20}), {"tokens"}).kind, LawKind::kUnexplained);
}

// Laws in several parameters at once (world, seq and batch change together).
const std::vector<Params> kMixed = {{{"world", 2}, {"seq", 4096}, {"batch", 2}},
                                    {{"world", 4}, {"seq", 8192}, {"batch", 2}},
                                    {{"world", 6}, {"seq", 16384}, {"batch", 1}},
                                    {{"world", 8}, {"seq", 8192}, {"batch", 1}}};

std::vector<Input> paramInputs(const std::vector<Params>& ps) {
  std::vector<Input> in;
  for (const auto& p : ps) in.push_back({nullptr, 0, {}, p, paramsText(p)});
  return in;
}

Law fitMixed(const std::vector<Params>& ps, const std::vector<std::int64_t>& sizes, const Params& target) {
  const auto pts = points(ps, sizes);
  EXPECT_TRUE(detail::severalParametersVary(pts));
  const auto in = paramInputs(ps);
  return detail::fitTerms(pts, detail::lawTerms(in, detail::paddedDims(pts)), target, in);
}

TEST(ScaleLaws, PaddedShardsAreFoundExactly) {
  // 4 * ceil(1024 / world): a LayerNorm weight in fp32, sharded by FSDP2 (world 6 pads 1024 to 1026).
  std::vector<std::int64_t> ln;
  for (const auto& p : kMixed) ln.push_back(4 * ((1024 + p.at("world") - 1) / p.at("world")));
  const auto dims = detail::paddedDims(points(kMixed, ln));
  EXPECT_NE(std::find(dims.begin(), dims.end(), 1024), dims.end());
  const Params far{{"world", 96}, {"seq", 32768}, {"batch", 1}};
  Law law = fitMixed(kMixed, ln, far);
  ASSERT_EQ(law.kind, LawKind::kTerms) << law.describe();
  EXPECT_TRUE(law.determined) << law.why_undetermined;
  bool exact = false;
  EXPECT_EQ(law.evaluate(far, &exact), 44);  // 11 rows at world 96, not 4096/96 = 42.67
  EXPECT_TRUE(exact);
  // A sum of a padded shard and an activation: 2 * tokens + 4 * ceil(1024 / world).
  std::vector<std::int64_t> mixed;
  for (std::size_t i = 0; i < kMixed.size(); ++i) mixed.push_back(ln[i] + 2 * kMixed[i].at("seq") * kMixed[i].at("batch"));
  const auto pts = points(kMixed, mixed);
  const auto in = paramInputs(kMixed);
  law = detail::fitTerms(pts, detail::lawTerms(in, dims), far, in);
  EXPECT_TRUE(law.determined) << law.why_undetermined;
  EXPECT_EQ(law.evaluate(far), 2 * 32768 + 44) << law.describe();
}

TEST(ScaleLaws, WhatTheInputsCannotTellIsNotGuessedAsExact) {
  // Two inputs where tokens, seq and world all double: size 1000 -> 2000 is tokens, seq or world.
  const std::vector<Params> two = {{{"world", 2}, {"seq", 4096}, {"batch", 2}}, {{"world", 4}, {"seq", 8192}, {"batch", 2}}};
  const Params target{{"world", 8}, {"seq", 8192}, {"batch", 1}};
  Law law = fitMixed(two, {1000, 2000}, target);
  EXPECT_FALSE(law.determined);
  EXPECT_NE(law.why_undetermined.find("differ at the target"), std::string::npos) << law.why_undetermined;
  ASSERT_TRUE(law.add_capture.has_value());
  // The capture to add is one where the competing laws differ: not one of the inputs.
  EXPECT_NE(*law.add_capture, two[0]);
  EXPECT_NE(*law.add_capture, two[1]);
  // Inputs whose worlds all divide dim 0 show no padding: a world that does not divide it is a
  // fraction of a byte, not rounded into an exact-looking size.
  const std::vector<Params> even = {kMixed[0], kMixed[1], kMixed[3]};
  std::vector<std::int64_t> ln;
  for (const auto& p : even) ln.push_back(4096 / p.at("world"));
  law = fitMixed(even, ln, {{"world", 96}, {"seq", 32768}, {"batch", 1}});
  EXPECT_FALSE(law.determined);
  ASSERT_TRUE(law.add_capture.has_value());
  EXPECT_NE(4096 % law.add_capture->at("world"), 0);  // a world that shows the padding
  // No law with fewer terms than points: unexplained, and one more capture is asked for.
  law = fitMixed(two, {1000, 1001}, target);
  EXPECT_FALSE(law.determined);
  EXPECT_TRUE(law.add_capture.has_value());
}

TEST(ScaleLaws, OverflowIsOutOfRangeNeverWrapped) {
  Law affine;
  affine.kind = LawKind::kAffine;
  affine.variable = "tokens";
  affine.basis = {{4096, 1 << 20}, {8192, 1 << 21}};
  bool exact = true;
  EXPECT_GT(affine.evaluate({{"seq", std::int64_t{1} << 62}}, &exact), kMaxRequestBytes);
  EXPECT_FALSE(exact);
  // seq x batch past int64 saturates instead of wrapping to a small size.
  EXPECT_GT(affine.evaluate({{"seq", std::int64_t{1} << 40}, {"batch", std::int64_t{1} << 40}}, &exact),
            kMaxRequestBytes);
  EXPECT_EQ(affine.evaluate({{"seq", 16384}}, &exact), 1 << 22);
  EXPECT_TRUE(exact);
  EXPECT_FALSE(checkParams({{"world", 0}}).ok());
  EXPECT_TRUE(checkParams({{"world", 0}}).isUsage());
  EXPECT_FALSE(checkParams({{"world", std::numeric_limits<std::int64_t>::max()}}).ok());
  EXPECT_TRUE(checkParams({{"dim", 0}, {"world", 8}}).ok());
}

TEST(ScaleAlign, MatchesAcrossInsertedAndRemovedRequests) {
  const std::vector<std::uint64_t> a = {1, 2, 3, 4, 5, 6};
  const std::vector<std::uint64_t> b = {1, 2, 9, 3, 5, 6, 7};
  auto m = alignSequences(a, b, 100);
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(*m, (std::vector<std::int64_t>{0, 1, 3, -1, 4, 5}));
  auto same = alignSequences(a, a, 0);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ((*same)[5], 5);
  const std::vector<std::uint64_t> c = {7, 8, 9, 10, 11, 12};
  EXPECT_FALSE(alignSequences(a, c, 3).ok());  // too different: not the same program
}

// --- the shared scale set

std::filesystem::path scaleTrace(const std::string& tag, const std::string& set = "scale") {
  const auto dir = test::sharedTrace(set);
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().starts_with(tag + ".rank") && e.path().extension() == ".pickle") return e.path();
  return {};
}

struct Loaded {
  std::shared_ptr<const traces::Snapshot> snapshot;
  Params params;
  std::string name;
};

Loaded load(const std::string& tag, const std::string& set = "scale") {
  const auto path = scaleTrace(tag, set);
  auto snap = traces::readSnapshotFile(path.string());
  EXPECT_TRUE(snap.ok()) << snap.message();
  auto params = paramsFromCaptureJson(path.string());
  EXPECT_TRUE(params.ok()) << params.message();
  return Loaded{std::make_shared<const traces::Snapshot>(std::move(*snap)), *params, tag};
}

std::vector<Loaded> loadAll(std::initializer_list<std::string> tags) {
  std::vector<Loaded> loaded;
  for (const auto& tag : tags) loaded.push_back(load(tag));
  return loaded;
}

std::vector<Input> inputsOf(const std::vector<Loaded>& loaded) {
  std::vector<Input> in;
  for (const auto& l : loaded) in.push_back({l.snapshot, l.snapshot->busiestDevice(), {}, l.params, l.name});
  return in;
}

RunResult measured(const Loaded& l) {
  auto rep = runWhatIf(l.snapshot, l.snapshot->busiestDevice(), {}, {});
  EXPECT_TRUE(rep.ok()) << rep.message();
  return rep->baseline;
}

struct Prediction {
  ScaleModel model;
  ScaledTrace trace;
  WhatIfReport report;
};

Prediction predict(const std::vector<Loaded>& from, const Params& target, const WhatIfOptions& w = {}) {
  Prediction p;
  auto trace = scaleTrace(inputsOf(from), target, &p.model);
  EXPECT_TRUE(trace.ok()) << trace.message();
  p.trace = std::move(*trace);
  auto rep = runWhatIf(p.trace.snapshot, p.trace.device_index, p.trace.env, w);
  EXPECT_TRUE(rep.ok()) << rep.message();
  p.report = std::move(*rep);
  return p;
}

TEST(ScaleShared, TwoWorldSizesPredictTheOthersToTheByte) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  std::vector<Loaded> from = loadAll({"w2-s4096", "w4-s4096"});
  for (const char* tag : {"w8-s4096", "w32-s4096"}) {
    const Loaded target = load(tag);
    const Prediction p = predict(from, {{"world", target.params.at("world")}});
    EXPECT_EQ(p.model.laws.count("unexplained"), 0u) << tag;
    EXPECT_GT(p.model.laws.at("shard(world)"), 0u) << tag;
    EXPECT_TRUE(p.report.conformance.exact()) << tag;  // the synthesized trace replays exactly
    const RunResult m = measured(target);
    EXPECT_EQ(p.report.baseline.peak_reserved.bytes, m.peak_reserved.bytes) << tag;
    EXPECT_EQ(p.report.baseline.peak_allocated.bytes, m.peak_allocated.bytes) << tag;
  }
}

TEST(ScaleShared, SequenceLengthsAreAffineInTokens) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  std::vector<Loaded> from = loadAll({"w4-s2048", "w4-s4096"});
  const Prediction p = predict(from, {{"seq", 8192}});
  EXPECT_GT(p.model.laws.at("affine(tokens)"), 0u);
  const RunResult m = measured(load("w4-s8192"));
  // Every miss is a request class that is not affine in tokens (docs/scale.md): the error is
  // bounded by what those requests amount to.
  std::int64_t unexplained_bytes = 0;
  for (const auto& f : p.model.requests)
    if (f.law.kind == LawKind::kUnexplained) unexplained_bytes += f.predicted;
  const auto err = p.report.baseline.peak_reserved.bytes - m.peak_reserved.bytes;
  if (unexplained_bytes == 0) {
    EXPECT_EQ(err, 0);
  }
  EXPECT_TRUE(p.report.conformance.exact());
}

TEST(ScaleShared, InputsOfDifferentLengthsAlign) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  // Batch 1 issues 6 requests fewer than batch 2: the streams still align, and the peaks of
  // w4-s8192 (batch 2, the same tokens as w4-s16384) come out exact.
  std::vector<Loaded> from = loadAll({"w4-s4096", "w4-s16384"});
  const Prediction p = predict(from, {{"seq", 8192}, {"batch", 2}});
  ASSERT_EQ(p.model.unmatched_per_input.size(), 2u);
  const auto other = 1 - p.model.template_input;
  // The batch-1 stream is the batch-2 one less 6 requests: exactly those go unmatched.
  const std::size_t template_only = p.model.requests.size() - p.model.matched_everywhere;
  EXPECT_EQ(template_only + p.model.unmatched_per_input[other], 6u);
  const RunResult m = measured(load("w4-s8192"));
  EXPECT_EQ(p.report.baseline.peak_reserved.bytes, m.peak_reserved.bytes);
}

TEST(ScaleShared, AnotherProgramIsNamedInTheNotes) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  // World size 1 skips FSDP2's all-gather: its requests do not all align with world 2's.
  std::vector<Loaded> from = loadAll({"w1-s4096", "w2-s4096"});
  ScaleModel model;
  auto trace = scaleTrace(inputsOf(from), {{"world", 4}}, &model);
  ASSERT_TRUE(trace.ok()) << trace.message();
  EXPECT_LT(model.matched_everywhere, model.requests.size());
  bool named = false;
  for (const auto& n : model.notes) named = named || n.find("not the same program") != std::string::npos;
  EXPECT_TRUE(named);
  // Checked against the capture of the target, the worst misses are the all-gather inputs.
  const Loaded target = load("w4-s4096");
  auto scaler = Scaler::create(inputsOf(from));
  ASSERT_TRUE(scaler.ok());
  auto cmp = scaler->compare(model, {target.snapshot, 0, {}, target.params, target.name});
  ASSERT_TRUE(cmp.ok()) << cmp.message();
  ASSERT_FALSE(cmp->misses.empty());
  EXPECT_NE(cmp->misses[0].where.find("_get_param_all_gather_inputs"), std::string::npos) << cmp->misses[0].where;
  EXPECT_LT(cmp->equal, cmp->compared);

  // A program that has nothing in common with the scale set is refused, not scaled.
  auto synth = readTrace(test::sharedTrace("synth/default-s1.pickle").string());
  ASSERT_TRUE(synth.ok()) << synth.message();
  std::vector<Input> mixed = inputsOf(from);
  mixed[0] = {synth->snapshot, synth->snap().busiestDevice(), {}, from[0].params, "default-s1"};
  auto refused = scaleTrace(mixed, {{"world", 4}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("not the same program"), std::string::npos) << refused.message();
}

TEST(ScaleShared, SnapshotIsWrittenReadBackAndRevalidates) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  std::vector<Loaded> from = loadAll({"w2-s4096", "w4-s4096"});
  const Prediction p = predict(from, {{"world", 16}});
  auto bytes = traces::writeSnapshotBytes(*p.trace.snapshot);
  ASSERT_TRUE(bytes.ok()) << bytes.message();
  auto back = traces::readSnapshotBytes(*bytes, "predicted.pickle");
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->devices.at(p.trace.device_index).events.size(),
            p.trace.snapshot->devices.at(p.trace.device_index).events.size());
  EXPECT_EQ(back->annotations.size(), from[0].snapshot->annotations.size());
  auto conf = runConformance(*back, p.trace.device_index, ConformanceOptions{});
  ASSERT_TRUE(conf.ok()) << conf.message();
  EXPECT_TRUE(conf->exact());
  // Stacks are kept: some allocation carries the template's frames.
  std::size_t with_frames = 0;
  for (const auto& e : back->devices.at(p.trace.device_index).events) with_frames += back->stack(e.stack).size() > 0;
  EXPECT_GT(with_frames, 0u);

  // The GUI's loader opens the written file: its recorded series and its model stage.
  const auto path = std::filesystem::temp_directory_path() / "reservoir-scale-gui.pickle";
  ASSERT_TRUE(traces::writeSnapshotFile(*p.trace.snapshot, path.string()).ok());
  auto loaded = loadTraceFile(path.string(), std::nullopt, nullptr, {});
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  EXPECT_EQ((*loaded)->series.peak_reserved, p.report.baseline.peak_reserved.bytes);
  EXPECT_EQ((*loaded)->annotations.size(), from[0].snapshot->annotations.size());
  auto model = buildModelStage(**loaded, kDefaultCheckpointEvery, nullptr, {});
  ASSERT_TRUE(model.ok()) << model.message();
  EXPECT_EQ((*model)->run.peak_reserved.bytes, p.report.baseline.peak_reserved.bytes);
  std::filesystem::remove(path);
}

TEST(ScaleShared, EditsApplyToThePredictedTrace) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  std::vector<Loaded> from = loadAll({"w2-s4096", "w4-s4096"});
  WhatIfOptions none;
  const Prediction base = predict(from, {{"world", 64}}, none);
  WhatIfOptions small;
  small.capacity = base.report.baseline.peak_reserved.bytes / 2;  // half the predicted peak: an oom
  const Prediction tight = predict(from, {{"world", 64}}, small);
  EXPECT_TRUE(tight.report.whatif.oom.has_value());
  WhatIfOptions cleanup;
  cleanup.edits.push_back(*parseEdit("cleanup after:resume.py:train_step#1"));
  cleanup.edits.push_back(*parseEdit("probe after:resume.py:train_step#1"));
  const Prediction cleaned = predict(from, {{"world", 64}}, cleanup);
  ASSERT_EQ(cleaned.report.whatif.probes.size(), 1u);
  EXPECT_LT(cleaned.report.whatif.probes[0].reserved, cleaned.report.baseline.probes[0].reserved);
}

// --- the shared scale-mixed set: world, seq and batch change together

TEST(ScaleMixed, FourSingleNodeInputsPredictBothTargetsToTheByte) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  std::vector<Loaded> from;
  for (const char* tag : {"w2-s4096-b2", "w4-s8192-b2", "w6-s16384-b1", "w8-s8192-b1"})
    from.push_back(load(tag, "scale-mixed"));
  for (const char* tag : {"w96-s32768-b1", "w128-s65536-b1"}) {
    const Loaded target = load(tag, "scale-mixed");
    Params to;
    for (const char* k : {"world", "seq", "batch"}) to[k] = target.params.at(k);
    const Prediction p = predict(from, to);
    // What the four inputs cannot tell is marked, never guessed as exact: the root group's
    // split_with_sizes_copy buffer (no law of fewer than 4 terms) and requests without Python
    // frames (autograd's C++ backward, one key for all: pairs the alignment cannot tell apart).
    // None is live at either peak.
    EXPECT_GT(p.model.undetermined, 0u) << tag;
    for (const auto& f : p.model.requests) {
      if (f.law.determined) continue;
      const auto where = describeStack(*from[p.model.template_input].snapshot, f.stack, 1);
      EXPECT_TRUE(where.find("split_with_sizes_copy") != std::string::npos || where == "(no frames recorded)")
          << tag << ": " << where << " " << f.law.describe();
    }
    EXPECT_EQ(p.model.inexact, 0u) << tag;
    EXPECT_TRUE(p.report.conformance.exact()) << tag;
    const RunResult m = measured(target);
    EXPECT_EQ(p.report.baseline.peak_reserved.bytes, m.peak_reserved.bytes) << tag;
    EXPECT_EQ(p.report.baseline.peak_allocated.bytes, m.peak_allocated.bytes) << tag;
  }
}

TEST(ScaleMixed, ThreeInputsNameTheCaptureToAdd) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  // Without the world-6 input no input shows FSDP2's padding: the shards at world 96 are not
  // guessed into exact-looking sizes; the JSON names the classes and the capture to add.
  const auto a = scaleTrace("w2-s4096-b2", "scale-mixed").string(), b = scaleTrace("w4-s8192-b2", "scale-mixed").string();
  const auto c = scaleTrace("w8-s8192-b1", "scale-mixed").string();
  auto r = test::runReservoir({"scale", "--from", a, "--from", b, "--from", c, "--to", "world=96,seq=32768,batch=1", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["model"]["sizes_exact"].get<bool>());
  EXPECT_GT(j["model"]["undetermined_at_target"].get<std::size_t>(), 0u);
  ASSERT_FALSE(j["model"]["undetermined"].empty());
  bool shard_named = false;
  for (const auto& u : j["model"]["undetermined"]) {
    EXPECT_FALSE(u["add_capture"].is_null()) << u.dump();
    shard_named = shard_named || u["where"].get<std::string>().find("_init_sharded_param") != std::string::npos;
  }
  EXPECT_TRUE(shard_named) << j["model"]["undetermined"].dump(1);
  r = test::runReservoir({"scale", "--from", a, "--from", b, "--from", c, "--to", "world=96,seq=32768,batch=1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("add a capture at "), std::string::npos) << r.out;
}

TEST(ScaleCli, GridJsonAndSidecarParameters) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  const auto a = scaleTrace("w2-s4096").string(), b = scaleTrace("w4-s4096").string();
  auto r = test::runReservoir({"scale", "--from", a, "--from", "world=4,seq=4096,batch=2:" + b, "--to", "world=8,32",
                               "--json", "--capacity", "141GiB"});
  ASSERT_EQ(r.code, 0) << r.err;  // parameters given for one input, read from the sidecar for the other
  r = test::runReservoir({"scale", "--from", a, "--from", b, "--to", "world=8,32", "--json", "--capacity", "141GiB"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["targets"].size(), 2u);
  EXPECT_EQ(j["targets"][1]["target"]["world"], 32);
  EXPECT_TRUE(j["targets"][0]["predicted"]["fits"].get<bool>());
  EXPECT_GT(j["targets"][0]["predicted"]["peak_reserved"].get<std::int64_t>(),
            j["targets"][1]["predicted"]["peak_reserved"].get<std::int64_t>());
  EXPECT_TRUE(j["targets"][0]["model"]["laws"].contains("shard(world)"));
  EXPECT_FALSE(j["targets"][0].contains("whatif"));
  EXPECT_EQ(j["targets"][0]["needs"]["peak_reserved"], j["targets"][0]["predicted"]["peak_reserved"]);  // it fits

  // A capacity below what the target needs: it does not fit, and `needs` still says how much.
  r = test::runReservoir({"scale", "--from", a, "--from", b, "--to", "world=8", "--json", "--capacity", "2GiB"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto tight = nlohmann::json::parse(r.out);
  EXPECT_FALSE(tight["predicted"]["fits"].get<bool>());
  EXPECT_EQ(tight["needs"]["peak_reserved"], j["targets"][0]["predicted"]["peak_reserved"]);

  const auto out = std::filesystem::temp_directory_path() / "reservoir-scale-test.pickle";
  r = test::runReservoir({"scale", "--from", a, "--from", b, "--to", "world=16", "--out", out.string(), "--json",
                          "--cleanup", "after:resume.py:train_step#1"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto one = nlohmann::json::parse(r.out);
  EXPECT_TRUE(one.contains("whatif"));
  EXPECT_TRUE(one["predicted"].contains("peak_allocated"));
  auto check = test::runReservoir({"check", out.string()});
  EXPECT_EQ(check.code, 0) << check.out << check.err;
  std::filesystem::remove(out);

  // Every what-if edit applies to the predicted trace.
  r = test::runReservoir({"scale",
                          "--from",
                          a,
                          "--from",
                          b,
                          "--to",
                          "world=16",
                          "--json",
                          "--cleanup",
                          "after:resume.py:train_step#1",
                          "--release",
                          "adam.py:adam@after:resume.py:train_step#1",
                          "--probe",
                          "after:resume.py:train_step#1",
                          "--demand",
                          "1GiB@after:resume.py:train_step#1",
                          "--reset-peaks",
                          "event:100",
                          "--set",
                          "expandable_segments:True",
                          "--fraction",
                          "0.9",
                          "--capacity",
                          "141GiB",
                          "--overhead",
                          "1GiB"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto all = nlohmann::json::parse(r.out);
  EXPECT_EQ(all["whatif"]["probes"].size(), 1u);
  EXPECT_TRUE(all["whatif"]["demand"]["fits"].get<bool>());
  EXPECT_NE(all["whatif"]["peak_reserved"], all["predicted"]["peak_reserved"]);

  // Usage errors: a grid with --out, a target parameter no input has, no --to.
  EXPECT_NE(test::runReservoir({"scale", "--from", a, "--from", b, "--to", "world=8,16", "--out", out.string()}).code,
            0);
  EXPECT_NE(test::runReservoir({"scale", "--from", a, "--from", b, "--to", "depth=3"}).code, 0);
  EXPECT_NE(test::runReservoir({"scale", "--from", a}).code, 0);
  EXPECT_NE(test::runReservoir({"scale", "--from", a, "--from", b, "--to", "world=8", "--no-capture-json"}).code, 0);
}

}  // namespace
}  // namespace reservoir::replay::scale
