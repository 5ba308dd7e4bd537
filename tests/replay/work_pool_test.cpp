// The pieces of multi-trace work that need no MPI: how items are assigned to processes, trace
// lists (@file, globs), a sweep split into slices and over several traces, and the reports that
// travel between processes as JSON (they must judge and render as the originals do).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "reservoir/replay/gate.h"
#include "reservoir/replay/report_json.h"
#include "reservoir/replay/sweep.h"
#include "reservoir/replay/trace.h"
#include "test_paths.h"
#include "work_pool.h"

namespace reservoir {
namespace {

std::uint64_t makespan(const std::vector<std::uint64_t>& costs, const std::vector<int>& owner, int processes) {
  std::vector<std::uint64_t> load(static_cast<std::size_t>(processes), 0);
  for (std::size_t i = 0; i < costs.size(); ++i) load[static_cast<std::size_t>(owner[i])] += costs[i];
  return *std::max_element(load.begin(), load.end());
}

// The best makespan, by trying every assignment (small inputs only).
std::uint64_t optimalMakespan(const std::vector<std::uint64_t>& costs, int processes) {
  std::vector<int> owner(costs.size(), 0);
  std::uint64_t best = ~std::uint64_t{0};
  while (true) {
    best = std::min(best, makespan(costs, owner, processes));
    std::size_t i = 0;
    while (i < owner.size() && ++owner[i] == processes) owner[i++] = 0;
    if (i == owner.size()) return best;
  }
}

TEST(AssignItems, WithinTheLargestFirstBoundOfTheBestAndEveryProcessGetsWork) {
  std::uint64_t seed = 12345;
  for (int round = 0; round < 200; ++round) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    const int processes = 1 + static_cast<int>((seed >> 33) % 3);
    const std::size_t n = static_cast<std::size_t>(processes) + (seed >> 40) % 5;
    std::vector<std::uint64_t> costs;
    for (std::size_t i = 0; i < n; ++i) costs.push_back(1 + ((seed >> (i % 30)) % 97));
    const auto owner = cli::assignItems(costs, processes);
    ASSERT_EQ(owner.size(), n);
    std::vector<std::size_t> count(static_cast<std::size_t>(processes), 0);
    for (int o : owner) {
      ASSERT_GE(o, 0);
      ASSERT_LT(o, processes);
      ++count[static_cast<std::size_t>(o)];
    }
    for (std::size_t c : count) EXPECT_GE(c, 1u) << "a process got nothing with " << n << " items";
    // Graham: largest-first is within 4/3 - 1/(3m) of the best.
    const double bound = (4.0 / 3.0 - 1.0 / (3.0 * processes)) * static_cast<double>(optimalMakespan(costs, processes));
    EXPECT_LE(static_cast<double>(makespan(costs, owner, processes)), bound + 1e-9);
    std::size_t total = 0;
    for (int p = 0; p < processes; ++p) total += cli::itemsOf(owner, costs, p).size();
    EXPECT_EQ(total, n);
  }
}

TEST(AssignItems, ItemsOfCostZeroStillSpreadOverEveryProcess) {
  const auto owner = cli::assignItems({0, 0, 0, 0, 0, 0}, 3);
  for (int p = 0; p < 3; ++p) EXPECT_EQ(std::count(owner.begin(), owner.end(), p), 2) << p;
}

class TraceListTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("reservoir-trace-list-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    std::filesystem::create_directories(dir_ / "sub");
    for (const char* f : {"b.pickle", "a.pickle", "notes.txt", "sub/c.pickle"}) std::ofstream(dir_ / f) << f;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(TraceListTest, GlobsAreSortedAndListsAreRelativeToTheirFolder) {
  auto g = cli::expandTraceList({(dir_ / "*.pickle").string()});
  ASSERT_TRUE(g.ok()) << g.message();
  EXPECT_EQ(*g, (std::vector<std::string>{(dir_ / "a.pickle").string(), (dir_ / "b.pickle").string()}));
  std::ofstream(dir_ / "list.txt") << "# ranks\n\nsub/c.pickle\n  a.pickle  \n"
                                   << (dir_ / "gone.pickle").string() << "\n";
  auto l = cli::expandTraceList({"@" + (dir_ / "list.txt").string(), (dir_ / "b.pickle").string()});
  ASSERT_TRUE(l.ok()) << l.message();
  EXPECT_EQ(*l, (std::vector<std::string>{(dir_ / "sub/c.pickle").string(), (dir_ / "a.pickle").string(),
                                          (dir_ / "gone.pickle").string(), (dir_ / "b.pickle").string()}));
  const auto sizes = cli::fileSizes(*l);
  EXPECT_EQ(sizes, (std::vector<std::uint64_t>{12, 8, 0, 8}));
}

TEST_F(TraceListTest, AGlobWithoutMatchesAndAnUnreadableListAreErrorsThatNameThem) {
  auto g = cli::expandTraceList({(dir_ / "*.zst").string()});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.message().find("*.zst"), std::string::npos) << g.message();
  auto l = cli::expandTraceList({"@" + (dir_ / "nope.txt").string()});
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.message().find("nope.txt"), std::string::npos) << l.message();
}

replay::PreparedTrace prepared(const std::string& rel) {
  auto trace = replay::readTrace((test::samplesDir() / rel).string());
  EXPECT_TRUE(trace.ok()) << trace.message();
  auto p = replay::prepareTrace(trace->snapshot, trace->snap().busiestDevice(), replay::ReplayEnvironment{});
  EXPECT_TRUE(p.ok()) << p.message();
  return std::move(*p);
}

replay::SweepReport sweep(const replay::PreparedTrace& p, std::size_t slice, std::size_t slices) {
  replay::SweepOptions o;
  o.jobs = 2;
  o.slice = slice;
  o.slices = slices;
  auto rep = replay::runSweep(p, o);
  EXPECT_TRUE(rep.ok()) << rep.message();
  return std::move(*rep);
}

// The answer without the work it took: seconds, and the replays (a slice shares runs only
// among its own candidates; over traces they add up).
nlohmann::json untimed(nlohmann::json j) {
  j.erase("seconds");
  j.erase("replays");
  return j;
}

TEST(SweepSlices, MergedSlicesAreTheWholeSweep) {
  const auto p = prepared("resume-tiny/resume-main.rank0.pickle");
  const auto whole = sweep(p, 0, 1);
  ASSERT_GE(whole.candidates.size(), 6u);
  std::vector<replay::SweepReport> parts;
  std::size_t in_parts = 0;
  for (std::size_t k = 0; k < 4; ++k) {
    parts.push_back(sweep(p, k, 4));
    EXPECT_LT(parts.back().candidates.size(), whole.candidates.size());
    in_parts += parts.back().candidates.size();
  }
  EXPECT_EQ(in_parts, whole.candidates.size());
  const auto merged = replay::mergeSweepSlices(parts);
  EXPECT_EQ(untimed(replay::sweepJson(merged, "t", 1000)), untimed(replay::sweepJson(whole, "t", 1000)));
  EXPECT_GE(merged.replays, whole.replays);
  EXPECT_LE(merged.replays, merged.evaluated);
  // And it travels as JSON without a change.
  const auto back = replay::sweepReportFromJson(replay::sweepJson(whole, "t", 1000));
  EXPECT_EQ(replay::sweepJson(back, "t", 1000), replay::sweepJson(whole, "t", 1000));
}

TEST(SweepOverTraces, EachCandidateIsScoredOnItsWorstTrace) {
  const auto a = sweep(prepared("resume-tiny/resume-main.rank0.pickle"), 0, 1);
  const auto b = sweep(prepared("resume-tiny/resume-main.rank1.pickle"), 0, 1);
  // A trace with itself is that trace.
  EXPECT_EQ(untimed(replay::sweepJson(replay::worstOverTraces({a, a}), "t", 1000)),
            untimed(replay::sweepJson(a, "t", 1000)));
  const auto both = replay::worstOverTraces({a, b});
  EXPECT_EQ(both.replays, a.replays + b.replays);
  EXPECT_EQ(both.baseline_peak_reserved, std::max(a.baseline_peak_reserved, b.baseline_peak_reserved));
  auto find = [](const replay::SweepReport& r, const std::vector<std::string>& edits) -> const replay::SweepCandidate* {
    for (const auto& c : r.candidates)
      if (c.edits == edits) return &c;
    return nullptr;
  };
  std::size_t on_both = 0;
  for (const auto& c : both.candidates) {
    const auto* ca = find(a, c.edits);
    const auto* cb = find(b, c.edits);
    ASSERT_TRUE(ca || cb) << c.description;
    const std::int64_t pa = ca ? ca->peak_reserved : a.baseline_peak_reserved;
    const std::int64_t pb = cb ? cb->peak_reserved : b.baseline_peak_reserved;
    EXPECT_EQ(c.peak_reserved, std::max(pa, pb)) << c.description;
    EXPECT_EQ(c.saving, both.baseline_peak_reserved - c.peak_reserved) << c.description;
    on_both += ca && cb ? 1 : 0;
  }
  EXPECT_GE(on_both, 3u) << "two ranks of one job should share most placements";
  // Ranked as one trace's sweep is: no new OOM, within the call cap, the largest saving first.
  for (std::size_t i = 1; i < both.candidates.size(); ++i) {
    const auto& x = both.candidates[i - 1];
    const auto& y = both.candidates[i];
    EXPECT_FALSE(replay::sweepRanksBefore(y, x)) << i;
    if (x.oom == y.oom && x.within_cap == y.within_cap) {
      EXPECT_GE(x.saving, y.saving) << i;
    }
  }
}

// What the gate reads travels as JSON: the verdict and its JSON from the facts read back equal
// those from the full reports.
TEST(GateFacts, TheVerdictFromTheFactsEqualsTheVerdictFromTheReports) {
  std::vector<std::string> names;
  std::vector<replay::WhatIfReport> full, facts;
  replay::WhatIfOptions w;
  w.analyze_peak = false;
  w.capacity = sim::ByteCount{600} << 20;
  w.edits.push_back(*replay::parseDemand("64MiB@event:100"));
  for (const char* rel : {"resume-tiny/resume-main.rank0.pickle", "resume-tiny/resume-main.rank1.pickle"}) {
    auto trace = replay::readTrace((test::samplesDir() / rel).string());
    ASSERT_TRUE(trace.ok()) << trace.message();
    auto rep = replay::runWhatIf(trace->snapshot, trace->snap().busiestDevice(), replay::ReplayEnvironment{}, w);
    ASSERT_TRUE(rep.ok()) << rep.message();
    names.push_back(rel);
    full.push_back(*rep);
    facts.push_back(replay::gateFactsFromJson(nlohmann::json::parse(replay::gateFactsJson(*rep).dump())));
  }
  replay::GateConditions cond;
  cond.max_peak_reserved = sim::ByteCount{500} << 20;
  cond.demands = w.edits;
  auto judge = [&](const std::vector<replay::WhatIfReport>& reps) {
    std::vector<replay::GateInput> in;
    for (std::size_t i = 0; i < reps.size(); ++i) in.push_back({names[i], &reps[i]});
    auto v = replay::judgeGate(in, cond);
    EXPECT_TRUE(v.ok()) << v.message();
    return replay::gateJson(*v, names, reps, cond.max_peak_reserved);
  };
  const auto from_full = judge(full);
  EXPECT_EQ(judge(facts), from_full);
  EXPECT_EQ(from_full["conditions"].size(), 3u) << from_full.dump(2);  // oom, demand, peak
}

// The tightest call cap over the traces is the report's, with its reason, and every candidate is
// judged against it.
TEST(SweepOverTraces, TheTightestCallCapDecides) {
  replay::SweepReport loose, tight, none;
  loose.max_calls = 10;
  loose.max_calls_source = "one per training step (10 step(s), from the annotation ProfilerStep)";
  tight.max_calls = 2;
  tight.max_calls_source = "given";
  none.max_calls_source = "no cap: the trace shows no training steps";
  replay::SweepCandidate c;
  c.edits = {"--cleanup", "after:x.py:f"};
  c.empty_cache_calls = 5;
  for (auto* r : {&loose, &tight, &none}) r->candidates.push_back(c);
  const auto both = replay::worstOverTraces({none, loose, tight});
  ASSERT_TRUE(both.max_calls.has_value());
  EXPECT_EQ(*both.max_calls, 2u);
  EXPECT_EQ(both.max_calls_source, "given");
  ASSERT_EQ(both.candidates.size(), 1u);
  EXPECT_FALSE(both.candidates[0].within_cap);
  const auto uncapped = replay::worstOverTraces({none, none});
  EXPECT_FALSE(uncapped.max_calls.has_value());
  EXPECT_EQ(uncapped.max_calls_source, none.max_calls_source);
}

}  // namespace
}  // namespace reservoir
