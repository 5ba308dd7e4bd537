// The CLI in-process: exit codes, --json fields, clear errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <limits>
#include <new>
#include <sstream>
#include <system_error>
#include <thread>

#include "cli.h"
#include "cli_runner.h"
#include "reservoir/replay/trace.h"
#include "reservoir/replay/whatif.h"
#include "reservoir/traces/reader.h"
#include "reservoir/traces/snapshot_cache.h"
#include "reservoir/traces/writer.h"
#include "test_paths.h"

namespace reservoir::cli {
namespace {

test::CliResult run(std::vector<std::string> args) { return test::runReservoir(std::move(args)); }

std::string sample(const std::string& rel) { return (test::samplesDir() / rel).string(); }

TEST(Cli, InfoJsonHasTheDocumentedFields) {
  auto r = run({"info", sample("resume-tiny/resume-main.rank0.pickle"), "--json", "--peak-allocated"});
  ASSERT_EQ(r.code, kOk) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["pickle_protocol"], 4);
  for (const char* k : {"segments", "blocks", "final", "devices"}) EXPECT_TRUE(j.contains(k)) << k;
  const auto& d = j["devices"][0];
  for (const char* k : {"device", "events", "actions", "peak_reserved", "peak_allocated", "complete"})
    EXPECT_TRUE(d.contains(k)) << k;
  EXPECT_EQ(d["events"], 1001);
  EXPECT_EQ(d["peak_reserved"], 534773760);
  EXPECT_EQ(d["peak_allocated"], 441454080);  // the capture's peak (step 2)
  EXPECT_EQ(d["complete"], true);
  EXPECT_EQ(j["final"]["reserved"], 534773760);
  EXPECT_EQ(d["conformance_replay"]["run"], true);
}

// The conformance replay (most of info's time) runs only when asked: the facts it gives are null
// without it, and both the JSON and the text say which they are and how to ask (issue 32). The
// other facts are the same either way.
TEST(Cli, InfoRunsTheConformanceReplayOnlyWhenAsked) {
  const std::string trace = sample("resume-tiny/resume-main.rank0.pickle");
  auto fast = run({"info", trace, "--json"});
  ASSERT_EQ(fast.code, kOk) << fast.err;
  auto slow = run({"info", trace, "--json", "--peak-allocated"});
  ASSERT_EQ(slow.code, kOk) << slow.err;
  auto a = nlohmann::json::parse(fast.out)["devices"][0];
  auto b = nlohmann::json::parse(slow.out)["devices"][0];
  EXPECT_TRUE(a["peak_allocated"].is_null());
  EXPECT_TRUE(a["peak_allocated_at"].is_null());
  EXPECT_EQ(a["conformance_replay"]["run"], false);
  EXPECT_EQ(a["conformance_replay"]["facts"], nlohmann::json({"peak_allocated", "peak_allocated_at"}));
  EXPECT_EQ(a["conformance_replay"]["input"], "peak_allocated");
  EXPECT_NE(a["peak_allocated_note"].get<std::string>().find("give --peak-allocated"), std::string::npos);
  EXPECT_EQ(b["peak_allocated"], 441454080);
  for (const char* k : {"peak_allocated", "peak_allocated_at", "peak_allocated_note", "conformance_replay"}) {
    a.erase(k);
    b.erase(k);
  }
  EXPECT_EQ(a, b);
  auto text = run({"info", trace});
  EXPECT_NE(text.out.find("peak allocated:  not computed: it comes from the conformance replay (give --peak-allocated)"),
            std::string::npos)
      << text.out;
}

TEST(Cli, InfoOnATruncatedTrace) {
  auto r = run({"info", sample("truncated/truncated-default-s22.pickle"), "--json"});
  ASSERT_EQ(r.code, kOk) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["devices"][0]["complete"], false);
}

TEST(Cli, CheckExitCodes) {
  EXPECT_EQ(run({"check", sample("worked-example.cpp-pickle2.pickle")}).code, kOk);
  auto ok = nlohmann::json::parse(run({"check", sample("resume-tiny/resume-main.rank0.pickle"), "--json"}).out);
  EXPECT_TRUE(ok.contains("events_compared"));
  EXPECT_TRUE(ok["first_divergence"].is_null());
  // Other settings: a report of where the decisions part from the recording, not a failure.
  auto other = run(
      {"check", sample("resume-tiny/resume-main.rank0.pickle"), "--settings", "expandable_segments:True", "--json"});
  EXPECT_EQ(other.code, kOk) << other.err;
  auto j = nlohmann::json::parse(other.out);
  EXPECT_EQ(j["exact"], false);
  EXPECT_EQ(j["first_difference"], 0);
  // The capture reset its peaks before step 2: only .peak statistics differ, so check finds
  // the reset from the replay, says where, and passes.
  auto found = run({"check", sample("resume-tiny/resume-main.rank0.pickle")});
  EXPECT_EQ(found.code, kOk) << found.out;
  EXPECT_NE(found.out.find("peaks were reset after event"), std::string::npos) << found.out;
  // The found position is the one the point names: pinning it gives the same statistics.
  EXPECT_EQ(
      run({"check", sample("resume-tiny/resume-main.rank0.pickle"), "--reset-peaks", "before:resume.py:train_step#1"})
          .code,
      kOk);
}

// A capture kit's sidecar says where the program reset its peaks: check uses it without being told,
// and --reset-peaks still overrides it.
TEST(Cli, CheckTakesThePeakResetFromTheSidecar) {
  const auto trace = (test::testDataDir() / "traces/capture/resume-w8-main.rank0.pickle.zst").string();
  auto r = run({"check", trace, "--json"});
  ASSERT_EQ(r.code, kOk) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["exact"], true);
  bool noted = false;
  for (const auto& n : j["notes"])
    noted = noted || n.get<std::string>().find("reset_peaks_after_event") != std::string::npos;
  EXPECT_TRUE(noted) << r.out;
  // Told a wrong place, the capture's peak statistics disagree.
  EXPECT_EQ(run({"check", trace, "--reset-peaks", "event:0"}).code, kFailed);
}

TEST(Cli, BadInputAndUsage) {
  auto missing = run({"info", "/nonexistent/x.pickle"});
  EXPECT_EQ(missing.code, kInputError);
  EXPECT_NE(missing.err.find("/nonexistent/x.pickle"), std::string::npos);
  EXPECT_EQ(run({"frobnicate"}).code, kUsage);
  EXPECT_EQ(run({"info"}).code, kUsage);
  auto bad_point = run({"whatif", sample("resume-tiny/resume-main.rank0.pickle"), "--cleanup", "after:nope_function"});
  EXPECT_EQ(bad_point.code, kUsage);  // a point that matches nothing is a usage error (issue 16)
  EXPECT_NE(bad_point.err.find("closest frames"), std::string::npos);
  auto help = run({"whatif", "--help"});
  EXPECT_EQ(help.code, kOk);
  EXPECT_NE(help.out.find("--cleanup"), std::string::npos);
  // The point syntax is the library's one text (the GUI's Help menu shows it too).
  EXPECT_NE(help.out.find("annotation:NAME:start"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("SELECTOR@POINT"), std::string::npos);
}

TEST(Cli, WhatIfJson) {
  auto r = run({"whatif", sample("resume-tiny/resume-main.rank0.pickle"), "--cleanup",
                "after:state_dict_loader.py:load", "--probe", "after:state_dict_loader.py:load", "--json"});
  ASSERT_EQ(r.code, kOk) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["whatif"]["probes"]["after:state_dict_loader.py:load"]["reserved"], 111149056);
  EXPECT_EQ(j["baseline"]["probes"]["after:state_dict_loader.py:load"]["reserved"], 169869312);
  EXPECT_EQ(j["whatif"]["peak_reserved"], 534773760);
  EXPECT_TRUE(j["whatif"]["oom"].is_null());
}

TEST(Cli, WhatIfOverRanksReportsTheMaximum) {
  auto r = run({"whatif", sample("resume-tiny/resume-main.rank0.pickle"),
                sample("resume-tiny/resume-main.rank1.pickle"), "--json"});
  ASSERT_EQ(r.code, kOk) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["traces"].size(), 2u);
  EXPECT_EQ(j["max_over_traces"]["baseline_peak_reserved"], 534773760);
}

// Hostile and careless input (issue 16): plain one-line messages and exit codes, never an abort.
TEST(CliHostile, UnknownOrMissingCommandSaysWhich) {
  auto unknown = run({"frobnicate", "x.pickle"});
  EXPECT_EQ(unknown.code, kUsage);
  EXPECT_NE(unknown.err.find("unknown command 'frobnicate'; commands: info, check, whatif, sweep, gate, export"),
            std::string::npos)
      << unknown.err;
  auto none = run({});
  EXPECT_EQ(none.code, kUsage);
  EXPECT_NE(none.err.find("no command given; commands: info"), std::string::npos) << none.err;
  EXPECT_EQ(none.err.find("A subcommand is required"), std::string::npos) << none.err;
}

TEST(CliHostile, WhatEscapesACommandIsOneLineAndAnExitCode) {
  auto guarded = [](auto thrower) {
    std::ostringstream err;
    const int code = runGuarded(err, [&]() -> int {
      thrower();
      return kOk;
    });
    return std::make_pair(code, err.str());
  };
  auto oom = guarded([] { throw std::bad_alloc(); });
  EXPECT_EQ(oom.first, kInputError);
  EXPECT_NE(oom.second.find("reservoir: out of memory"), std::string::npos) << oom.second;
  auto sys = guarded([] { throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again)); });
  EXPECT_EQ(sys.first, kInternal);
  EXPECT_NE(sys.second.find("reservoir: internal error: system call failed"), std::string::npos) << sys.second;
  auto other = guarded([] { throw 42; });
  EXPECT_EQ(other.first, kInternal);
  for (const auto& r : {oom, sys, other}) EXPECT_EQ(std::count(r.second.begin(), r.second.end(), '\n'), 1) << r.second;
  EXPECT_EQ(guarded([] {}).first, kOk);
}

// A trace list that names nothing (an empty file, blank or comment lines) is no trace at all: a
// usage error for every command that takes lists, not a crash (check) or a silent pass (gate).
TEST(CliHostile, AnEmptyTraceListIsAUsageError) {
  const auto list = std::filesystem::temp_directory_path() / "reservoir-empty-list.txt";
  std::ofstream(list) << "# nothing here\n\n   \n";
  const std::string at = "@" + list.string();
  for (const auto& args : std::vector<std::vector<std::string>>{{"check", at},
                                                                {"whatif", at},
                                                                {"sweep", at},
                                                                {"gate", at, "--max-peak-reserved", "1GiB"},
                                                                {"check", "@/dev/null"}}) {
    auto r = run(args);
    EXPECT_EQ(r.code, kUsage) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("no traces to read"), std::string::npos) << args[0] << ": " << r.err;
  }
  std::filesystem::remove(list);
}

TEST(CliHostile, SweepJobsAreCheckedAndClamped) {
  const std::string trace = sample("resume-tiny/resume-main.rank0.pickle");
  for (const char* cmd : {"sweep", "whatif"}) {  // whatif took 0 as "every core" without a word
    auto zero = run({cmd, trace, "--jobs", "0"});
    EXPECT_EQ(zero.code, kUsage) << cmd;
    EXPECT_NE(zero.err.find("--jobs 0: give at least 1 thread"), std::string::npos) << cmd << ": " << zero.err;
  }
  auto many = run({"sweep", trace, "--jobs", "10000", "--max-candidates", "2", "--no-settings", "--json"});
  ASSERT_EQ(many.code, kOk) << many.err;
  EXPECT_NE(many.err.find("--jobs 10000 is more than the"), std::string::npos) << many.err;
  EXPECT_EQ(nlohmann::json::parse(many.out)["evaluated"], 2);
}

TEST(CliHostile, ExportReportsWriteErrorsAndReplacesNoDevice) {
  const std::string trace = sample("resume-tiny/resume-main.rank0.pickle");
  auto csv = run({"export", trace, "--csv", "/dev/full"});
  EXPECT_EQ(csv.code, kInputError);
  EXPECT_NE(csv.err.find("/dev/full: write failed"), std::string::npos) << csv.err;
  EXPECT_EQ(csv.out.find("wrote"), std::string::npos) << csv.out;
  auto pickle = run({"export", trace, "--out", "/dev/full"});
  EXPECT_EQ(pickle.code, kInputError);
  EXPECT_NE(pickle.err.find("/dev/full: write failed"), std::string::npos) << pickle.err;
  EXPECT_FALSE(std::filesystem::exists("/dev/full.tmp"));
  auto to_null = run({"export", trace, "--out", "/dev/null", "--csv", "/dev/null"});
  EXPECT_EQ(to_null.code, kOk) << to_null.err;
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
  EXPECT_FALSE(std::filesystem::exists("/dev/null.tmp"));
}

// A hang-up (a closed terminal) or any other signal that ends the process during an export
// removes the X.tmp being written, as SIGINT and SIGTERM do; the old X stays.
TEST(CliHostile, AnExportEndedBySignalLeavesNoTemp) {
  const auto dir = std::filesystem::temp_directory_path() / ("reservoir-sig-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string trace = (dir / "s.pickle").string();
  ASSERT_EQ(run({"synth", "--events", "1000000", trace}).code, kOk);
  for (int sig : {SIGHUP, SIGALRM, SIGUSR1}) {
    const auto out = dir / "e.pickle";
    const auto tmp = dir / "e.pickle.tmp";
    std::ofstream(out) << "old";
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) _exit(run({"export", trace, "--out", out.string()}).code);
    bool seen = false;
    for (int i = 0; i < 60000 && !seen; ++i) {  // up to 30 s
      seen = std::filesystem::exists(tmp);
      if (!seen && ::waitpid(child, nullptr, WNOHANG) == child) break;
      if (!seen) ::usleep(500);
    }
    ASSERT_TRUE(seen) << "the export ended before its temporary was seen";
    ::kill(child, sig);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << "signal " << sig << ", status " << status;
    EXPECT_FALSE(std::filesystem::exists(tmp)) << "signal " << sig;
    std::ifstream in(out);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "old") << "signal " << sig;
  }
  std::filesystem::remove_all(dir);
}

// An export whose output is the trace it reads (or both outputs one file) is refused before
// anything is written: `export X --csv X` overwrote the snapshot.
TEST(CliHostile, AnExportNeverWritesOverItsInput) {
  const auto dir = std::filesystem::temp_directory_path() / ("reservoir-same-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto trace = dir / "t.pickle";
  std::filesystem::copy_file(sample("resume-tiny/resume-main.rank0.pickle"), trace);
  const auto size = std::filesystem::file_size(trace);
  std::filesystem::create_symlink(trace, dir / "alias.pickle");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"export", trace.string(), "--csv", trace.string()},
           {"export", trace.string(), "--out", (dir / "alias.pickle").string()},
           {"export", trace.string(), "--out", (dir / "o").string(), "--csv", (dir / "o").string()},
           {"export", trace.string(), "--out", (dir / "o").string(), "--csv", (dir / "." / "o").string()},
           {"export", trace.string(), "--csv", (dir / "t.json").string()}}) {
    auto r = run(args);
    EXPECT_EQ(r.code, kUsage) << r.err;
    EXPECT_TRUE(r.err.find("is the trace being read") != std::string::npos ||
                r.err.find("name the same file") != std::string::npos ||
                r.err.find("is the trace's capture JSON") != std::string::npos)
        << r.err;
  }
  EXPECT_EQ(std::filesystem::file_size(trace), size);
  EXPECT_FALSE(std::filesystem::exists(dir / "o"));
  std::filesystem::remove_all(dir);
}

TEST(CliHostile, OutOfRangeValuesAreBadInput) {
  auto r = run({"info", (test::testDataDir() / "bad" / "event_size_2pow63.pickle").string()});
  EXPECT_EQ(r.code, kInputError);
  EXPECT_NE(r.err.find("device_traces[0] entry 0 ('alloc'): 'size' is 9223372036854775808"), std::string::npos)
      << r.err;
  auto devices = run({"export", (test::testDataDir() / "bad" / "devices_1025.pickle").string(), "--csv", "/dev/null"});
  EXPECT_EQ(devices.code, kInputError);
  EXPECT_NE(devices.err.find("lists 1025 devices"), std::string::npos) << devices.err;
}

// Every bad file of the reader's corpus (tests/data/bad/expected.json, the ones read with the
// default limits): one line, plain words first (its class's headline), then the file, the byte
// offset and the reader's detail; exit 3.
TEST(CliHostile, EveryBadFileSaysWhatIsWrongInPlainWordsFirst) {
  std::ifstream in(test::testDataDir() / "bad" / "expected.json");
  const auto table = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(table.is_array());
  std::size_t checked = 0;
  for (const auto& c : table) {
    if (c.contains("limits")) continue;
    const std::string path = (test::testDataDir() / "bad" / c.at("file").get<std::string>()).string();
    auto r = run({"info", path});
    EXPECT_EQ(r.code, kInputError) << path << ": " << r.err;
    const std::string start = "reservoir: " + c.at("headline").get<std::string>() + " (file " + path;
    EXPECT_EQ(r.err.substr(0, start.size()), start) << r.err;
    if (!c.at("offset").is_null()) {
      const std::string at = start + ", byte " + std::to_string(c.at("offset").get<std::uint64_t>());
      EXPECT_EQ(r.err.substr(0, at.size()), at) << r.err;
    }
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    ++checked;
  }
  EXPECT_GE(checked, 100u);
}

TEST(CliHostile, SettingsNumbersInPlainWords) {
  auto r = run({"check", sample("resume-tiny/resume-main.rank0.pickle"), "--settings",
                "max_split_size_mb:99999999999999999999999"});
  EXPECT_EQ(r.code, kUsage) << r.err;
  EXPECT_NE(r.err.find("'99999999999999999999999' is too large: more than 2^64 - 1"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("stoull"), std::string::npos) << r.err;
  // Not a size: the same words for a key that counts divisions.
  auto div = run({"whatif", sample("resume-tiny/resume-main.rank0.pickle"), "--set",
                  "roundup_power2_divisions:99999999999999999999999"});
  EXPECT_EQ(div.code, kUsage) << div.err;
  EXPECT_NE(div.err.find("is too large: more than 2^64 - 1"), std::string::npos) << div.err;
  EXPECT_EQ(div.err.find("bytes or MiB"), std::string::npos) << div.err;
}

std::string careless(const std::string& name) { return (test::testDataDir() / "careless" / name).string(); }

// One line on stderr: "reservoir: ..." and nothing else.
void expectOneLine(const test::CliResult& r, const std::string& words) {
  EXPECT_NE(r.err.find("reservoir: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
  EXPECT_LE(std::count(r.err.begin(), r.err.end(), '\n'), 2) << r.err;  // CLI11's own errors add a "run --help" line
}

// Sizes on the command line follow the library's one rule: "80GB" is 80 x 10^9 bytes, "80GiB"
// 80 x 2^30, and a bare "80G" is refused as ambiguous (exit 2).
TEST(CliHostile, SizesAreDecimalInGBAndBinaryInGiB) {
  const std::string trace = sample("resume-tiny/resume-main.rank0.pickle");
  auto gb = run({"whatif", trace, "--capacity", "80GB", "--json"});
  ASSERT_EQ(gb.code, kOk) << gb.err;
  EXPECT_EQ(nlohmann::json::parse(gb.out)["capacity"], 80'000'000'000LL);
  auto gib = run({"whatif", trace, "--capacity", "80GiB", "--json"});
  ASSERT_EQ(gib.code, kOk) << gib.err;
  EXPECT_EQ(nlohmann::json::parse(gib.out)["capacity"], 80LL << 30);
  auto bare = run({"gate", trace, "--max-peak-reserved", "80G"});
  EXPECT_EQ(bare.code, kUsage) << bare.err;
  expectOneLine(bare, "--max-peak-reserved: '80G' is ambiguous: write 80GiB (80 x 2^30 bytes) or 80GB");
}

TEST(CliHostile, BadFlagValuesAreUsageErrors) {
  const std::string trace = sample("resume-tiny/resume-main.rank0.pickle");
  for (const char* cmd : {"whatif", "sweep", "gate"}) {
    auto nan = run({cmd, trace, "--fraction", "nan"});
    EXPECT_EQ(nan.code, kUsage) << cmd << ": " << nan.err;
    expectOneLine(nan, "'nan' is not a fraction in [0, 1]");
  }
  auto check_nan = run({"check", trace, "--fraction", "nan"});
  EXPECT_EQ(check_nan.code, kUsage) << check_nan.err;
  for (const char* cmd : {"whatif", "sweep", "export"}) {
    std::vector<std::string> args = {cmd, trace, "--capacity", "1GiB", "--overhead", "2GiB"};
    if (std::string(cmd) == "export") args.insert(args.end(), {"--csv", "/dev/null"});
    auto r = run(args);
    EXPECT_EQ(r.code, kUsage) << cmd << ": " << r.err;
    expectOneLine(r, "--overhead 2GiB is not below --capacity 1GiB");
  }
  auto huge = run({"whatif", trace, "--set", "max_split_size_mb:99999999999999999999999"});
  EXPECT_EQ(huge.code, kUsage) << huge.err;
  expectOneLine(huge, "'99999999999999999999999' is too large");
}

TEST(CliHostile, PointsAndSelectorsThatMatchNothingAreUsageErrors) {
  const std::string trace = sample("resume-tiny/resume-main.rank0.pickle");
  auto cleanup = run({"whatif", trace, "--cleanup", "before:nope"});
  EXPECT_EQ(cleanup.code, kUsage) << cleanup.err;
  expectOneLine(cleanup, "point 'before:nope' matches no event's stack");
  auto release = run({"whatif", trace, "--release", "nope@event:5"});
  EXPECT_EQ(release.code, kUsage) << release.err;
  expectOneLine(release, "selector 'nope' matches no allocation's stack, so nothing would be released");
  auto gate = run({"gate", trace, "--max-peak-reserved", "1GiB", "--cleanup", "after:nope"});
  EXPECT_EQ(gate.code, kUsage) << gate.err;
  auto events = run({"whatif", trace, "--cleanup", "event:99999999"});
  EXPECT_EQ(events.code, kUsage) << events.err;
  expectOneLine(events, "the trace has 1001 events");
  // The sweep's objective point too (it was an input error, exit 3).
  auto objective = run({"sweep", trace, "--minimize", "reserved:before:nope", "--max-candidates", "2"});
  EXPECT_EQ(objective.code, kUsage) << objective.err;
  expectOneLine(objective, "the point to minimize at: point 'before:nope' matches no event's stack");
  auto window = run({"sweep", trace, "--minimize", "peak-in:nope", "--max-candidates", "2"});
  EXPECT_EQ(window.code, kUsage) << window.err;
  expectOneLine(window, "peak-in:nope: point 'annotation:nope:start' matches no annotation");
  // A capacity with no room says the overhead it compared (none given: 0), not an empty value.
  auto zero = run({"whatif", trace, "--capacity", "0"});
  EXPECT_EQ(zero.code, kUsage) << zero.err;
  expectOneLine(zero, "--overhead 0 is not below --capacity 0");
  // Without --capacity the capacity the run would use (here the device's total) is the bound.
  for (const char* cmd : {"whatif", "sweep", "export"}) {
    std::vector<std::string> args = {cmd, trace, "--overhead", "18446744073709551615"};
    if (std::string(cmd) == "export") args.insert(args.end(), {"--csv", "/dev/null"});
    auto huge = run(args);
    EXPECT_EQ(huge.code, kUsage) << cmd << ": " << huge.err;
    expectOneLine(huge, "is not below the capacity (150109880320 bytes, the device's total memory (device_total in " +
                            sample("resume-tiny/resume-main.rank0.json") + "))");
  }
  // A selector that matches allocations still works.
  EXPECT_EQ(run({"whatif", trace, "--release", "state_dict_loader.py:load@event:500"}).code, kOk);
}

// A dump folder is the list of its ranks' snapshots (issue 32): torchtitan's layout, here built
// from the two ranks of resume-tiny (with their capture JSONs). Each result keeps the rank's path
// and adds its rank; --iteration picks an older iteration.
class DumpFolderCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("reservoir-dump-cli-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    for (const char* it : {"iteration_1", "iteration_2_exit"})
      for (int r : {0, 1}) {
        const auto to = dir_ / "memory_snapshot" / it;
        std::filesystem::create_directories(to);
        // iteration_1 holds rank 1's trace as rank 0's and the other way round: which one was read shows.
        const int from = std::string(it) == "iteration_1" ? 1 - r : r;
        const std::string src = sample("resume-tiny/resume-main.rank" + std::to_string(from));
        std::filesystem::copy_file(src + ".pickle", to / ("rank" + std::to_string(r) + "_memory_snapshot.pickle"));
        std::filesystem::copy_file(src + ".json", to / ("rank" + std::to_string(r) + "_memory_snapshot.json"));
      }
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(DumpFolderCli, CheckGateAndInfoTakeTheFolderAsItsRanks) {
  auto check = run({"check", dir_.string(), "--json"});
  ASSERT_EQ(check.code, kOk) << check.err;
  auto j = nlohmann::json::parse(check.out);
  ASSERT_EQ(j["traces"].size(), 2u);
  EXPECT_EQ(j["exact"], 2);
  for (std::size_t r : {0u, 1u}) {
    EXPECT_EQ(j["traces"][r]["rank"], r);
    EXPECT_EQ(j["traces"][r]["trace"], (dir_ / "memory_snapshot/iteration_2_exit" /
                                        ("rank" + std::to_string(r) + "_memory_snapshot.pickle"))
                                           .string());
  }
  auto gate = run({"gate", (dir_ / "memory_snapshot").string(), "--max-peak-reserved", "100GiB", "--json"});
  ASSERT_EQ(gate.code, kOk) << gate.err;
  auto g = nlohmann::json::parse(gate.out);
  ASSERT_EQ(g["traces"].size(), 2u);
  EXPECT_EQ(g["traces"][1]["rank"], 1);
  EXPECT_EQ(g["pass"], true);
  auto tight = run({"gate", dir_.string(), "--max-peak-reserved", "1MiB"});
  EXPECT_EQ(tight.code, kFailed) << tight.out << tight.err;
  // The same ranks, given one by one, give the same facts; iteration 1 holds them swapped.
  auto info = nlohmann::json::parse(run({"info", dir_.string(), "--json"}).out);
  auto old = nlohmann::json::parse(run({"info", dir_.string(), "--iteration", "1", "--json"}).out);
  ASSERT_EQ(info["traces"].size(), 2u);
  ASSERT_EQ(old["traces"].size(), 2u);
  for (std::size_t r : {0u, 1u}) {
    auto one = nlohmann::json::parse(
        run({"info", sample("resume-tiny/resume-main.rank" + std::to_string(r) + ".pickle"), "--json"}).out);
    EXPECT_EQ(info["traces"][r]["devices"], one["devices"]) << r;
    EXPECT_EQ(old["traces"][1 - r]["devices"], one["devices"]) << r;
    EXPECT_EQ(info["traces"][r]["rank"], r);
  }
}

TEST_F(DumpFolderCli, IterationErrorsAreUsageErrors) {
  auto missing = run({"check", dir_.string(), "--iteration", "5"});
  EXPECT_EQ(missing.code, kUsage) << missing.err;
  expectOneLine(missing, "--iteration: " + (dir_ / "memory_snapshot").string() +
                             " has no iteration 5 (its iterations: 1, 2_exit)");
  auto nofolder = run({"whatif", sample("resume-tiny/resume-main.rank0.pickle"), "--iteration", "1"});
  EXPECT_EQ(nofolder.code, kUsage) << nofolder.err;
  expectOneLine(nofolder, "--iteration 1: it chooses among a dump folder's iterations, and no folder is given");
  const auto empty = dir_ / "empty";
  std::filesystem::create_directories(empty);
  auto none = run({"sweep", empty.string()});
  EXPECT_EQ(none.code, kInputError) << none.err;
  expectOneLine(none, empty.string() + ": no snapshots in this folder");
}

// RESERVOIR_MAX_MEMORY sets the reader's cap for the process; a value that is not a size is a
// usage error naming the variable, before any command runs.
TEST(CliHostile, TheMemoryCapComesFromTheEnvironment) {
  const std::string trace = sample("resume-tiny/resume-main.rank0.pickle");
  ::setenv("RESERVOIR_MAX_MEMORY", "lots", 1);
  auto bad = run({"info", trace});
  EXPECT_EQ(bad.code, kUsage) << bad.err;
  expectOneLine(bad, "RESERVOIR_MAX_MEMORY: not a size: 'lots'");
  ::setenv("RESERVOIR_MAX_MEMORY", "1MiB", 1);  // below what the sample needs (the 512 MiB floor aside)
  auto small = run({"info", trace});
  EXPECT_EQ(traces::defaultReadMemoryCap(), 1u << 20);
  EXPECT_EQ(small.code, kInputError) << small.err;
  EXPECT_NE(small.err.find("over its cap of 1 MiB"), std::string::npos) << small.err;
  ::setenv("RESERVOIR_MAX_MEMORY", "8GiB", 1);
  EXPECT_EQ(run({"info", trace}).code, kOk);
  EXPECT_EQ(traces::defaultReadMemoryCap(), 8ull << 30);
  ::unsetenv("RESERVOIR_MAX_MEMORY");
  traces::setDefaultReadMemoryCap(std::nullopt);
}

// RESERVOIR_CACHE: the folder a large snapshot's read is kept in (unset: ~/.cache/reservoir),
// or "off"; the second read of an unchanged file loads it, with the same answers.
TEST(Cli, TheSnapshotCacheComesFromTheEnvironment) {
  const auto dir = std::filesystem::temp_directory_path() / ("reservoir-cache-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string trace = (dir / "s.pickle").string();
  ASSERT_EQ(run({"synth", "--events", "900000", trace}).code, kOk);
  ASSERT_GE(std::filesystem::file_size(trace), traces::SnapshotCache{}.min_file_bytes);
  ::unsetenv("RESERVOIR_CACHE");
  ASSERT_EQ(run({"info", sample("resume-tiny/resume-main.rank0.pickle")}).code, kOk);
  ASSERT_TRUE(traces::defaultSnapshotCache());
  EXPECT_EQ(traces::defaultSnapshotCache()->folder, traces::standardCacheFolder());
  ::setenv("RESERVOIR_CACHE", "off", 1);
  const auto plain = run({"info", trace, "--json", "--no-capture-json"});
  ASSERT_EQ(plain.code, kOk) << plain.err;
  EXPECT_FALSE(traces::defaultSnapshotCache());
  const auto cache = dir / "cache";
  ::setenv("RESERVOIR_CACHE", cache.c_str(), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));  // a file written this lately is not kept
  const auto before = traces::snapshotCacheCounts();
  const auto first = run({"info", trace, "--json", "--no-capture-json"});
  const auto second = run({"info", trace, "--json", "--no-capture-json"});
  EXPECT_EQ(traces::snapshotCacheCounts().stored, before.stored + 1);
  EXPECT_EQ(traces::snapshotCacheCounts().loaded, before.loaded + 1);
  EXPECT_EQ(first.out, plain.out);
  EXPECT_EQ(second.out, plain.out);
  ::unsetenv("RESERVOIR_CACHE");
  traces::setDefaultSnapshotCache(std::nullopt);
  std::filesystem::remove_all(dir);
}

TEST(CliHostile, AnOomWithoutDeviceFreeGivesNoCapacity) {
  // An 'addr' is not a device_free: torch writes none for an oom, so it gives no capacity either.
  for (const char* file : {"oom_without_device_free.pickle", "oom_with_addr.pickle"}) {
    auto r = run({"whatif", careless(file), "--json"});
    ASSERT_EQ(r.code, kOk) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_TRUE(j["capacity"].is_null()) << file << ": " << j["capacity"];
    EXPECT_NE(r.out.find("no 'device_free'"), std::string::npos) << file << ": " << r.out;
  }
  auto info = run({"info", careless("oom_without_device_free.pickle")});
  ASSERT_EQ(info.code, kOk) << info.err;
  // info says what is true: the oom gives no capacity (not "taken as 0").
  EXPECT_NE(info.out.find("the oom entry records no device_free: no capacity is taken from it"), std::string::npos)
      << info.out;
  EXPECT_EQ(info.out.find("taken as 0"), std::string::npos) << info.out;
}

// A replay that departs from the recording at the same peak says so, instead of "N vs recorded N
// (DIFFERS)" with two equal numbers.
TEST(CliHostile, EqualPeaksFromADepartingReplayAreExplained) {
  auto r = run({"whatif", careless("oom_same_peak.pickle")});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_NE(r.out.find("peak reserved 20971520 vs recorded 20971520 (the same peak, but the replay departs from the "
                       "recording: see the notes)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("(DIFFERS)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("departs from the recording at event 4"), std::string::npos) << r.out;
}

TEST(CliHostile, ReversedTimesAreNotAnswered) {
  auto r = run({"info", careless("reversed_time.pickle")});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_EQ(r.out.find("-3.581 s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("time span:       unknown"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("time_goes_backwards"), std::string::npos) << r.out;
}

TEST(CliHostile, CheckBlamesTheBadFree) {
  for (const char* name : {"free_never_allocated.pickle", "double_free.pickle"}) {
    auto r = run({"check", careless(name)});
    EXPECT_EQ(r.code, kInputError) << name << ": " << r.err;
    expectOneLine(r, "event 4 ('free_requested' of 0x4000");
  }
  auto dbl = run({"check", careless("double_free.pickle")});
  EXPECT_NE(dbl.err.find("event 4 ('free_requested' of 0x40000000, 512 bytes): frees a block the trace never "
                         "allocated"),
            std::string::npos)
      << dbl.err;
  EXPECT_EQ(dbl.err.find("a block live at the first event"), std::string::npos) << dbl.err;
  auto unknown = run({"check", careless("unknown_action.pickle")});
  EXPECT_EQ(unknown.code, kInputError) << unknown.err;
  expectOneLine(unknown, "event 2 ('free_requested' of 0x40000000, 512 bytes): frees a block the trace never");
  EXPECT_NE(unknown.err.find("1 entry with an action this version does not know (e.g. 'frobnicate')"),
            std::string::npos)
      << unknown.err;
}

// Frames with file names no command line could pass (8 KiB each here; the issue's was 100 MB):
// sweep makes no candidates of them, so it does not hold copies of the names per candidate.
TEST(CliHostile, SweepSkipsHugePointNames) {
  auto snap = traces::readSnapshotFile(sample("resume-tiny/resume-main.rank0.pickle"));
  ASSERT_TRUE(snap.ok()) << snap.message();
  for (std::size_t i = 0; i < snap->frames.size(); ++i)
    snap->frames[i].filename = snap->strings.intern(std::to_string(i) + std::string(8192, 'x'));
  const auto path = std::filesystem::temp_directory_path() / ("huge-names-" + std::to_string(::getpid()) + ".pickle");
  ASSERT_TRUE(traces::writeSnapshotFile(*snap, path.string()).ok());
  auto r = run({"sweep", path.string(), "--no-settings", "--json"});
  std::filesystem::remove(path);
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_EQ(r.out.find(std::string(8192, 'x')), std::string::npos);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["evaluated"], 0);  // the trace's annotations are still candidates
  for (const auto& c : j["candidates"])
    EXPECT_EQ(c["edits"][1].get<std::string>().rfind("annotation:", 0), 0u) << c["edits"][1];
}

// One file name of 16 MiB (the program's own file, so its functions stay candidates: the name
// still ends in capture/resume.py) costs one copy and one look (issue 32): sweep decided per
// frame of every stack whether the file was a library's, scanning the name each time (100 MB:
// over 300 s). The answers are those of the same trace with the short name.
TEST(CliHostile, ALongFileNameIsLookedAtOnce) {
  auto snap = traces::readSnapshotFile(sample("resume-tiny/resume-main.rank0.pickle"));
  ASSERT_TRUE(snap.ok()) << snap.message();
  const std::string tail = "/capture/resume.py";
  const StringId longer = snap->strings.intern("/" + std::string(16u << 20, 'd') + tail);
  std::size_t replaced = 0;
  for (auto& f : snap->frames) {
    const std::string_view name = snap->str(f.filename);
    if (name.size() >= tail.size() && name.substr(name.size() - tail.size()) == tail) {
      f.filename = longer;
      ++replaced;
    }
  }
  ASSERT_GT(replaced, 0u);
  const auto path = std::filesystem::temp_directory_path() / ("long-name-" + std::to_string(::getpid()) + ".pickle");
  ASSERT_TRUE(traces::writeSnapshotFile(*snap, path.string()).ok());
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run({"sweep", path.string(), "--no-capture-json", "--jobs", "1", "--json"});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::filesystem::remove(path);
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_LT(seconds, 20.0);  // about 1 s; scanned per frame, minutes
  auto plain = run({"sweep", sample("resume-tiny/resume-main.rank0.pickle"), "--no-capture-json", "--jobs", "1",
                    "--json"});
  ASSERT_EQ(plain.code, kOk) << plain.err;
  auto a = nlohmann::json::parse(r.out), b = nlohmann::json::parse(plain.out);
  ASSERT_EQ(a["candidates"].size(), b["candidates"].size());
  for (std::size_t i = 0; i < a["candidates"].size(); ++i) {
    EXPECT_EQ(a["candidates"][i]["edits"], b["candidates"][i]["edits"]) << i;
    EXPECT_EQ(a["candidates"][i]["peak_reserved"], b["candidates"][i]["peak_reserved"]) << i;
  }
}

// Found by the structure-aware fuzzer (fuzz/whatif_fuzzer.cpp): `synth` spun forever when every
// request was an empty_cache, or when no allocation fit the budget.
TEST(CliHostile, SynthRefusesWorkloadsThatMakeNoEntries) {
  const auto out = std::filesystem::temp_directory_path() / ("synth-" + std::to_string(::getpid()) + ".pickle");
  auto every = run({"synth", out.string(), "--events", "100", "--empty-cache-every", "1"});
  EXPECT_EQ(every.code, kUsage) << every.err;
  expectOneLine(every, "empty_cache every 1 request leaves none for allocations");
  auto budget = run({"synth", out.string(), "--events", "100", "--budget", "0"});
  EXPECT_EQ(budget.code, kUsage) << budget.err;
  expectOneLine(budget, "no trace entry in 1000000 requests");
  // 2^64 - 1 entries grew past 8 GB before it was stopped; the cap keeps a trace under 2 GB.
  auto huge = run({"synth", out.string(), "--events", "18446744073709551615"});
  EXPECT_EQ(huge.code, kUsage) << huge.err;
  expectOneLine(huge, "entries is too large: at most 25000000");
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_EQ(run({"synth", out.string(), "--events", "100", "--empty-cache-every", "2"}).code, kOk);
  std::filesystem::remove(out);
}

// Found by the structure-aware fuzzer: a recorded garbage_collection_threshold of inf reached the
// model (UBSan: inf converted to a size). Recorded settings are checked as torch checks them.
TEST(CliHostile, RecordedSettingsOutOfRangeAreBadInput) {
  auto snap = traces::readSnapshotFile(sample("resume-tiny/resume-main.rank0.pickle"));
  ASSERT_TRUE(snap.ok()) << snap.message();
  const auto path = std::filesystem::temp_directory_path() / ("gc-inf-" + std::to_string(::getpid()) + ".pickle");
  for (double gc : {std::numeric_limits<double>::infinity(), 1.5, -0.2}) {
    snap->settings.present = true;
    snap->settings.garbage_collection_threshold = gc;
    ASSERT_TRUE(traces::writeSnapshotFile(*snap, path.string()).ok());
    auto r = run({"whatif", path.string()});
    EXPECT_EQ(r.code, kInputError) << gc << ": " << r.err;
    expectOneLine(r, "recorded garbage_collection_threshold");
  }
  snap->settings.garbage_collection_threshold = 0;
  snap->settings.roundup_power2_divisions[3] = 3;
  ASSERT_TRUE(traces::writeSnapshotFile(*snap, path.string()).ok());
  auto r = run({"whatif", path.string()});
  std::filesystem::remove(path);
  EXPECT_EQ(r.code, kInputError) << r.err;
  expectOneLine(r, "recorded roundup_power2_divisions 3 is not a power of 2");
}


// replay's "the model on the recording" is check's verdict (one library rule for peak resets):
// on shared traces whose check is exact only with a reset (found from the replay, or named by
// the capture JSON), replay with the model backend says exact too, with the same reset.
std::string shared(const std::string& rel) { return test::sharedTrace(rel).string(); }

TEST(Cli, ReplayAndCheckAgreeOnPeakResets) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  for (const std::string& path : {sample("resume-tiny/fresh.rank0.pickle"), shared("scale/w1-s4096.rank0.pickle"),
                                  shared("synth/default-s1.pickle")}) {
    SCOPED_TRACE(path);
    auto check = run({"check", path, "--json"});
    ASSERT_EQ(check.code, kOk) << check.err;
    const auto c = nlohmann::json::parse(check.out);
    auto replay = run({"replay", path, "--backend", "model", "--json"});
    ASSERT_EQ(replay.code, kOk) << replay.err;
    const auto r = nlohmann::json::parse(replay.out);
    EXPECT_EQ(r["model_vs_recording_exact"], c["exact"]);
    EXPECT_TRUE(r["model_vs_recording_exact"].get<bool>());
    auto text = run({"replay", path, "--backend", "model"});
    ASSERT_EQ(text.code, kOk) << text.err;
    EXPECT_NE(text.out.find("the model on the recording: exact\n"), std::string::npos) << text.out;
    // The reset check reports is the one replay names.
    for (const auto& note : c["notes"]) {
      if (note.get<std::string>().find("peak") != std::string::npos) {
        EXPECT_NE(text.out.find("note: " + note.get<std::string>()), std::string::npos) << text.out;
      }
    }
  }
  // Without the rule the peaks would differ: the preparation alone (no resets) is not exact.
  for (const std::string& rel : {sample("resume-tiny/fresh.rank0.pickle"), shared("scale/w1-s4096.rank0.pickle")}) {
    auto trace = replay::readTrace(rel);
    ASSERT_TRUE(trace.ok()) << trace.message();
    auto p = replay::prepareTrace(trace->snapshot, 0, trace->environment());
    ASSERT_TRUE(p.ok()) << p.message();
    EXPECT_FALSE(p->conformance.exact()) << rel;
    EXPECT_FALSE(p->conformance.stats_mismatches.empty()) << rel;
    auto verdict = replay::recordingVerdict(*p, trace->environment());
    ASSERT_TRUE(verdict.ok()) << verdict.message();
    EXPECT_TRUE(verdict->exact()) << rel;
  }
}


// A fraction run checked without its sidecar: the CLI words the library's hint as --fraction F.
TEST(Cli, CheckNamesAMissingFraction) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  const std::string trace = shared("synth/gcthresh-s5.pickle");
  auto text = run({"check", trace, "--no-capture-json"});
  EXPECT_EQ(text.code, kFailed);
  EXPECT_NE(text.out.find("--fraction 0.05 makes the replay exact"), std::string::npos) << text.out;
  auto json = run({"check", trace, "--no-capture-json", "--json"});
  const auto j = nlohmann::json::parse(json.out);
  ASSERT_TRUE(j["missing_fraction"].is_object()) << json.out;
  EXPECT_EQ(j["missing_fraction"]["fraction"], 0.05);
  EXPECT_EQ(run({"check", trace, "--no-capture-json", "--fraction", "0.05"}).code, kOk);
  auto with_sidecar = run({"check", trace, "--json"});
  EXPECT_TRUE(nlohmann::json::parse(with_sidecar.out)["missing_fraction"].is_null());
}

// --set '' is given: torch's defaults, not "no --set" (the recorded settings).
TEST(Cli, SetEmptyIsTorchsDefaults) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  const std::string trace = shared("synth/expandable-s2.pickle");
  auto recorded = run({"whatif", trace, "--json"});
  ASSERT_EQ(recorded.code, kOk) << recorded.err;
  auto empty = run({"whatif", trace, "--set", "", "--json"});
  ASSERT_EQ(empty.code, kOk) << empty.err;
  const auto a = nlohmann::json::parse(recorded.out), b = nlohmann::json::parse(empty.out);
  EXPECT_NE(a["settings"]["whatif"].get<std::string>().find("expandable_segments:True"), std::string::npos) << a["settings"];
  EXPECT_EQ(b["settings"]["whatif"].get<std::string>().find("expandable_segments:True"), std::string::npos) << b["settings"];
  EXPECT_NE(a["whatif"]["peak_reserved"], b["whatif"]["peak_reserved"]);
}

}  // namespace
}  // namespace reservoir::cli
