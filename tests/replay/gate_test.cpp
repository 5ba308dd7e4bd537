// reservoir gate: each condition (a --demand, out of memory under --capacity, a budget on peak
// reserved) fails the gate with its one-line reason; several traces name the worst; --json lists
// every condition; and the commands in docs/ci.md run with the exit codes the doc states. The
// figures are the measured ones of the real traces (tests/data/traces/offload/README.md,
// ../shared/traces/README.md for the resume traces bundled in traces/samples).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "cli.h"
#include "cli_runner.h"
#include "reservoir/replay/gate.h"
#include "reservoir/replay/report_json.h"
#include "reservoir/replay/trace.h"
#include "reservoir/traces/reader.h"
#include "test_paths.h"

namespace reservoir::replay {
namespace {

// offload-main / offload-cleanup, measured by the capturing process (the JSON beside each).
constexpr std::int64_t kTotal = 150109880320;               // device_total
constexpr std::int64_t kReservedMain = 2925527040;          // reserved at wake-up, no cleanup
constexpr std::int64_t kReservedCleanup = 69206016;         // reserved at wake-up, after the cleanup
constexpr std::int64_t kFreeMain = 146397069312;            // device_free at wake-up, no cleanup
constexpr std::int64_t kFreeCleanup = 149253390336;         // device_free at wake-up, after the cleanup
constexpr std::int64_t kPeakReservedOffload = 2925527040;   // reserved_bytes.all.peak
constexpr std::int64_t kPeakAllocatedOffload = 2757526016;  // allocated_bytes.all.peak
// What the device holds outside PyTorch's cache (the CUDA context): the same in both runs.
constexpr std::int64_t kOverhead = kTotal - kFreeMain - kReservedMain;
static_assert(kOverhead == kTotal - kFreeCleanup - kReservedCleanup);
// A wake-up demand between the two free figures: it fits only with the cleanup.
constexpr std::int64_t kWakeUp = 138LL << 30;
static_assert(kFreeMain < kWakeUp && kWakeUp <= kFreeCleanup);
constexpr const char* kOffloadPoint = "after:offload.py:offload";  // where offload() returns
// The wake-up, where the figures were measured: the end of main()'s one call (in
// offload-cleanup after the empty_cache, which main() calls). The backward passes' events
// (no Python frames) inside it do not split the call.
constexpr const char* kWakeUpPoint = "after:offload.py:main#1";
// resume-tiny / resume-expandable resume-main: peak reserved over the process (reached in step 2).
constexpr std::int64_t kPeakTiny = 534773760;
constexpr std::int64_t kPeakExpandable = 27197964288;
constexpr const char* kAfterLoad = "after:state_dict_loader.py:load";

std::string offload(const std::string& name) {
  return (test::testDataDir() / "traces/offload" / (name + ".pickle.zst")).string();
}
std::string sample(const std::string& rel) { return (test::samplesDir() / rel).string(); }
const std::string kTiny = "resume-tiny/resume-main.rank0.pickle";
const std::string kExpandable = "resume-expandable/resume-main.rank0.pickle";

test::CliResult cli(std::vector<std::string> args) { return test::runReservoir(std::move(args)); }

std::vector<std::string> wakeUp(std::vector<std::string> traces) {
  std::vector<std::string> a{"gate"};
  a.insert(a.end(), traces.begin(), traces.end());
  a.insert(a.end(), {"--capacity", std::to_string(kTotal), "--overhead", std::to_string(kOverhead), "--demand",
                     "138GiB@" + std::string(kWakeUpPoint)});
  return a;
}

bool has(const test::CliResult& r, const std::string& text) { return (r.out + r.err).find(text) != std::string::npos; }

nlohmann::json condition(const nlohmann::json& j, const std::string& kind) {
  for (const auto& c : j.at("conditions"))
    if (c.at("kind") == kind) return c;
  ADD_FAILURE() << "no condition " << kind << " in " << j.dump(2);
  return {};
}

TEST(GateDemand, TheWakeUpDemandDoesNotFitWithoutTheCleanup) {
  const auto r = cli(wakeUp({offload("offload-main")}));
  EXPECT_EQ(r.code, cli::kFailed) << r.out << r.err;
  // One line naming the trace, the demand, the point and the free bytes (the measured device_free).
  EXPECT_TRUE(has(r, "FAIL: " + offload("offload-main") + ": demand 138.00 GiB (148176371712 bytes) at " +
                         kWakeUpPoint + " does NOT fit: free 136.34 GiB (" + std::to_string(kFreeMain) + " bytes)"))
      << r.out;
  EXPECT_TRUE(has(r, "short by 1.66 GiB (" + std::to_string(kWakeUp - kFreeMain) + " bytes)")) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

TEST(GateDemand, TheWakeUpDemandFitsWithTheCleanupAndOnTheCleanupRun) {
  auto args = wakeUp({offload("offload-main")});
  args.insert(args.end(), {"--cleanup", kOffloadPoint, "--json"});
  const auto r = cli(args);
  ASSERT_EQ(r.code, cli::kOk) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j.at("pass").get<bool>());
  const auto d = condition(j, "demand");
  EXPECT_EQ(d.at("verdict"), "pass");
  EXPECT_EQ(d.at("point"), kWakeUpPoint);
  EXPECT_EQ(d.at("bytes").get<std::int64_t>(), kWakeUp);
  EXPECT_EQ(d.at("traces").at(0).at("free").get<std::int64_t>(), kFreeCleanup);
  // The recorded run with the cleanup gives the same verdict.
  const auto measured = cli(wakeUp({offload("offload-cleanup")}));
  EXPECT_EQ(measured.code, cli::kOk) << measured.out << measured.err;
  EXPECT_EQ(measured.out.rfind("OK: ", 0), 0u) << measured.out;
}

TEST(GateOom, RunningOutOfMemoryUnderASmallCapacityFailsTheGate) {
  // Below the measured peak allocated the run cannot fit; at the measured peak reserved it does.
  const auto small = cli({"gate", offload("offload-main"), "--capacity", "2GiB"});
  EXPECT_EQ(small.code, cli::kFailed) << small.out << small.err;
  EXPECT_TRUE(has(small, "FAIL: " + offload("offload-main") + ": predicted out of memory at event ")) << small.out;
  EXPECT_TRUE(has(small, "under capacity 2.00 GiB (2147483648 bytes)")) << small.out;
  static_assert(2147483648 < kPeakAllocatedOffload);
  const auto json = cli({"gate", offload("offload-main"), "--capacity", "2GiB", "--json"});
  const auto oom = condition(nlohmann::json::parse(json.out), "oom");
  EXPECT_EQ(oom.at("verdict"), "fail");
  const auto& t = oom.at("traces").at(0);
  EXPECT_GT(t.at("oom").at("size").get<std::int64_t>(), 0);
  EXPECT_TRUE(has(small, "malloc of " + sim::formatSize(t.at("oom").at("size").get<std::uint64_t>()) + " (" +
                             std::to_string(t.at("oom").at("size").get<std::int64_t>()) + " bytes)"))
      << small.out;
  // A memory fraction is a fraction of the device's total memory. This capture's JSON records the
  // total only inside its step figures (after_offload.device_total), so a fraction alone would be of
  // an H200 assumed (the same 150109880320 bytes by chance): refused. With the total given, the
  // fraction is a capacity too.
  const auto assumed = cli({"gate", offload("offload-main"), "--fraction", "0.01"});
  EXPECT_EQ(assumed.code, cli::kUsage) << assumed.out << assumed.err;
  EXPECT_TRUE(has(assumed, "an H200's 150109880320 bytes would only be assumed; give the device's capacity"))
      << assumed.err;
  EXPECT_TRUE(assumed.out.empty()) << assumed.out;
  const auto fraction =
      cli({"gate", offload("offload-main"), "--capacity", std::to_string(kTotal), "--fraction", "0.01"});
  static_assert(kTotal / 100 < kPeakAllocatedOffload);
  EXPECT_EQ(fraction.code, cli::kFailed) << fraction.out << fraction.err;
  EXPECT_TRUE(has(fraction, "predicted out of memory at event ")) << fraction.out;
  EXPECT_TRUE(has(fraction, "under memory fraction 0.01 of capacity 139.80 GiB (" + std::to_string(kTotal) +
                                " bytes) (the given capacity)"))
      << fraction.out;
  // A capture JSON's own device_total is the total, named with where it comes from.
  const auto sidecar = cli({"gate", sample(kTiny), "--fraction", "0.001"});
  EXPECT_EQ(sidecar.code, cli::kFailed) << sidecar.out << sidecar.err;
  EXPECT_TRUE(has(sidecar,
                  "under memory fraction 0.001 of capacity 139.80 GiB (150109880320 bytes) (the device's "
                  "total memory (device_total in " +
                      (test::samplesDir() / "resume-tiny/resume-main.rank0.json").string() + "))"))
      << sidecar.out;
  const auto enough = cli({"gate", offload("offload-main"), "--capacity", std::to_string(kPeakReservedOffload)});
  EXPECT_EQ(enough.code, cli::kOk) << enough.out << enough.err;
}

TEST(GatePeak, APeakOverTheBudgetFailsWithAndWithoutTheLoadCleanup) {
  // The post-load cleanup lowers what is reserved after the load, not the step-2 peak (measured
  // resume-postload: 534773760 too), so the gate's verdict does not change with it.
  for (const auto& edits : {std::vector<std::string>{}, std::vector<std::string>{"--cleanup", kAfterLoad}}) {
    auto at = [&](std::int64_t budget) {
      std::vector<std::string> a{"gate", sample(kTiny), "--max-peak-reserved", std::to_string(budget)};
      a.insert(a.end(), edits.begin(), edits.end());
      return cli(a);
    };
    EXPECT_EQ(at(kPeakTiny).code, cli::kOk);
    const auto over = at(kPeakTiny - 1);
    EXPECT_EQ(over.code, cli::kFailed) << over.out << over.err;
    EXPECT_TRUE(has(over, sample(kTiny) + ": predicted peak reserved 510.00 MiB exceeds the budget 510.00 MiB by 1 "
                                          "bytes (534773760 > 534773759 bytes)"))
        << over.out;
  }
}

TEST(GateTraces, TheWorstTraceDecidesAndIsNamed) {
  // The demand: the run without the cleanup has less free at the wake-up.
  const auto d = cli(wakeUp({offload("offload-cleanup"), offload("offload-main")}));
  EXPECT_EQ(d.code, cli::kFailed) << d.out << d.err;
  EXPECT_TRUE(has(d, "FAIL: " + offload("offload-main") + ": demand")) << d.out;
  EXPECT_TRUE(has(d, "(worst of 2 traces)")) << d.out;
  auto args = wakeUp({offload("offload-cleanup"), offload("offload-main")});
  args.push_back("--json");
  const auto j = nlohmann::json::parse(cli(args).out);
  EXPECT_EQ(j.at("worst_trace"), offload("offload-main"));
  const auto c = condition(j, "demand");
  EXPECT_EQ(c.at("traces").at(0).at("free").get<std::int64_t>(), kFreeCleanup);
  EXPECT_EQ(c.at("traces").at(1).at("free").get<std::int64_t>(), kFreeMain);
  EXPECT_EQ(j.at("traces").at(0).at("pass"), true);
  EXPECT_EQ(j.at("traces").at(1).at("pass"), false);
  // The peak: of two runs, the larger one fails a budget between them.
  const auto p = cli({"gate", sample(kExpandable), sample(kTiny), "--max-peak-reserved", "1GiB"});
  EXPECT_EQ(p.code, cli::kFailed) << p.out << p.err;
  EXPECT_TRUE(has(p, "FAIL: " + sample(kExpandable) + ": predicted peak reserved 25.33 GiB exceeds the budget"))
      << p.out;
  EXPECT_TRUE(has(p, "(" + std::to_string(kPeakExpandable) + " > 1073741824 bytes) (worst of 2 traces)")) << p.out;
  const auto ok =
      cli({"gate", sample(kExpandable), sample(kTiny), "--max-peak-reserved", std::to_string(kPeakExpandable)});
  EXPECT_EQ(ok.code, cli::kOk) << ok.out << ok.err;
  EXPECT_TRUE(has(ok, "OK: 2 condition(s) on 2 trace(s): ")) << ok.out;
  EXPECT_TRUE(has(ok, sample(kExpandable) + ": predicted peak reserved 25.33 GiB (27197964288 bytes) <= budget"))
      << ok.out;
}

TEST(GateJson, ListsEveryConditionWithItsVerdictPerTrace) {
  auto args = wakeUp({offload("offload-main")});
  args.insert(args.end(), {"--max-peak-reserved", std::to_string(kPeakReservedOffload), "--json"});
  const auto r = cli(args);
  EXPECT_EQ(r.code, cli::kFailed) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j.at("pass").get<bool>());
  ASSERT_EQ(j.at("conditions").size(), 3u) << j.dump(2);
  EXPECT_EQ(condition(j, "oom").at("verdict"), "pass");
  EXPECT_EQ(condition(j, "demand").at("verdict"), "fail");
  const auto peak = condition(j, "peak_reserved");
  EXPECT_EQ(peak.at("verdict"), "pass");
  EXPECT_EQ(peak.at("budget").get<std::int64_t>(), kPeakReservedOffload);
  EXPECT_EQ(peak.at("traces").at(0).at("peak_reserved").get<std::int64_t>(), kPeakReservedOffload);
  EXPECT_EQ(j.at("reason"), condition(j, "demand").at("reason"));
  EXPECT_EQ(j.at("max_peak_reserved").get<std::int64_t>(), kPeakReservedOffload);
}

TEST(GateUsage, AConditionIsRequiredAndBadInputIsAnError) {
  const auto none = cli({"gate", offload("offload-main")});
  EXPECT_EQ(none.code, cli::kUsage) << none.out;
  EXPECT_TRUE(has(none, "gate needs a condition")) << none.err;
  // Flag values that cannot be used (not a size, a point that matches nothing) are usage errors.
  EXPECT_EQ(cli({"gate", offload("offload-main"), "--max-peak-reserved", "lots"}).code, cli::kUsage);
  EXPECT_EQ(cli({"gate", offload("offload-main"), "--demand", "lots@" + std::string(kOffloadPoint)}).code, cli::kUsage);
  EXPECT_EQ(cli({"gate", offload("offload-main"), "--demand", "1GiB@after:no_such_function"}).code, cli::kUsage);
  EXPECT_EQ(cli({"gate", "/no/such/trace.pickle", "--max-peak-reserved", "1GiB"}).code, cli::kInputError);
}

TEST(GateLibrary, JudgesReportsAndRefusesMissingOnes) {
  auto snap = readTrace(offload("offload-main"));
  ASSERT_TRUE(snap.ok()) << snap.message();
  WhatIfOptions o;
  o.analyze_peak = false;
  o.capacity = static_cast<sim::ByteCount>(kTotal);
  o.overhead = static_cast<sim::ByteCount>(kOverhead);
  o.edits.push_back(*parseDemand("138GiB@" + std::string(kWakeUpPoint)));
  auto rep = runWhatIf(snap->snapshot, snap->snap().busiestDevice(), ReplayEnvironment{}, o);
  ASSERT_TRUE(rep.ok()) << rep.message();
  GateConditions c;
  c.demands = o.edits;
  EXPECT_FALSE(hasCondition(GateConditions{}, false));
  EXPECT_TRUE(hasCondition(GateConditions{}, true));
  EXPECT_TRUE(hasCondition(c, false));
  auto v = judgeGate({{"main", &*rep}}, c);
  ASSERT_TRUE(v.ok()) << v.message();
  EXPECT_FALSE(v->pass);
  ASSERT_EQ(v->conditions.size(), 2u);
  EXPECT_EQ(v->conditions[1].kind, ConditionVerdict::Kind::kDemand);
  EXPECT_EQ(v->conditions[1].traces.at(0).value, kFreeMain);
  EXPECT_EQ(v->reason.rfind("main: demand", 0), 0u) << v->reason;
  // The budget alone passes at the measured peak.
  GateConditions peak;
  peak.max_peak_reserved = static_cast<sim::ByteCount>(kPeakReservedOffload);
  EXPECT_TRUE(judgeGate({{"main", &*rep}}, peak)->pass);
  EXPECT_FALSE(judgeGate({}, peak).ok());
  EXPECT_FALSE(judgeGate({{"main", nullptr}}, peak).ok());
  // Without a capacity a demand cannot be judged.
  WhatIfOptions unknown = o;
  unknown.capacity.reset();
  unknown.overhead = 0;
  auto rep2 = runWhatIf(snap->snapshot, snap->snap().busiestDevice(), ReplayEnvironment{}, unknown);
  ASSERT_TRUE(rep2.ok()) << rep2.message();
  auto u = judgeGate({{"main", &*rep2}}, c);
  ASSERT_TRUE(u.ok()) << u.message();
  EXPECT_FALSE(u->pass);
  EXPECT_TRUE(u->undecided);
  // What it lacks is data (a capacity); each front end words it: plain words by default, the
  // front end's own when its Wording is given (the CLI's "--capacity", Python's "capacity=").
  EXPECT_EQ(u->missing, Input::kCapacity);
  EXPECT_EQ(u->conditions.back().missing, Input::kCapacity);
  EXPECT_NE(u->reason.find("(give a capacity)"), std::string::npos) << u->reason;
  EXPECT_EQ(u->reason.find("--"), std::string::npos) << u->reason;
  static const Wording keywords{
      [](Input i) { return std::string(inputName(i)); }, [](Input i) { return std::string(inputName(i)) + "="; },
      [](Input i, std::string_view value) { return std::string(inputName(i)) + "=" + std::string(value); },
      [](Command) { return std::string("trace.check()"); }};
  GateConditions worded = c;
  worded.wording = &keywords;
  auto w = judgeGate({{"main", &*rep2}}, worded);
  ASSERT_TRUE(w.ok()) << w.message();
  EXPECT_NE(w->reason.find("(give capacity=)"), std::string::npos) << w->reason;
  EXPECT_EQ(gateJson(*w, {"main"}, {*rep2}, std::nullopt)["missing"], "capacity");
  EXPECT_TRUE(gateJson(*v, {"main"}, {*rep}, std::nullopt)["missing"].is_null());
  // A demand whose point is never reached names the option in the same words (a usage error).
  GateConditions never = worded;
  never.demands = {*parseDemand("1GiB@event:999999999")};
  auto nr = judgeGate({{"main", &*rep2}}, never);
  ASSERT_FALSE(nr.ok());
  EXPECT_TRUE(nr.status().isUsage());
  EXPECT_NE(nr.message().find("main: demand '1GiB@event:999999999': its point was never reached"), std::string::npos)
      << nr.message();
}

// docs/ci.md: every `reservoir gate ...  # exit N` line in it runs, from the repository root,
// with exit code N.
TEST(GateDocs, TheCommandsInDocsCiRunWithTheExitCodesTheDocStates) {
  const std::filesystem::path root = RESERVOIR_SOURCE_DIR;
  std::ifstream in(root / "docs/ci.md");
  ASSERT_TRUE(in) << "docs/ci.md is missing";
  const std::regex line(R"(^\s*reservoir (gate .*\S)\s+# exit (\d)\s*$)");
  const auto previous = std::filesystem::current_path();
  std::filesystem::current_path(root);
  std::size_t ran = 0, failing = 0;
  bool fenced = false;
  for (std::string text; std::getline(in, text);) {
    if (text.rfind("```", 0) == 0) fenced = !fenced;
    std::smatch m;
    if (!fenced || !std::regex_match(text, m, line)) continue;
    std::istringstream words(m[1].str());
    std::vector<std::string> args;
    for (std::string w; words >> w;) args.push_back(w);
    const auto r = cli(args);
    EXPECT_EQ(r.code, std::stoi(m[2].str())) << text << "\n" << r.out << r.err;
    ++ran;
    failing += r.code == cli::kFailed;
  }
  std::filesystem::current_path(previous);
  EXPECT_GE(ran, 6u);
  EXPECT_GE(failing, 2u);
}

}  // namespace
}  // namespace reservoir::replay
