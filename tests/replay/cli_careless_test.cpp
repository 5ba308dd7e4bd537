// Hostile and careless input, round 4 (issue 31), through the CLI in-process: a gate that could
// not judge never passes, no command writes over what it reads, a lost stdout is an error, a
// memory fraction names the total it is taken of, a sidecar that cannot be used is refused with
// its path, and the words say what is true. Each refusal leaves the ordinary case working.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "cli_runner.h"
#include "test_paths.h"

namespace reservoir::cli {
namespace {

namespace fs = std::filesystem;

test::CliResult run(std::vector<std::string> args) { return test::runReservoir(std::move(args)); }

std::string sample(const std::string& rel) { return (test::samplesDir() / rel).string(); }
std::string careless(const std::string& name) { return (test::testDataDir() / "careless" / name).string(); }
std::string noHistory(const std::string& name) { return (test::testDataDir() / "no-history" / name).string(); }

bool has(const std::string& text, const std::string& words) { return text.find(words) != std::string::npos; }

// A fresh folder under the temporary directory, removed at the end of the test.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(fs::temp_directory_path() / ("reservoir-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  [[nodiscard]] std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// Item 1: a snapshot without allocation history passed `gate --max-peak-reserved 1` ("predicted
// peak reserved 0 bytes") and `sweep` ranked against "baseline 0 bytes", exit 0.
TEST(CliCareless, ASnapshotWithoutHistoryIsNeverAPass) {
  for (const char* name : {"no-traces.pickle", "state-only.pickle"}) {
    const std::string path = noHistory(name);
    for (const auto& args : std::vector<std::vector<std::string>>{{"gate", path, "--max-peak-reserved", "1"},
                                                                  {"gate", path, "--capacity", "1MiB"},
                                                                  {"gate", path, "--capacity", "1MiB", "--json"},
                                                                  {"sweep", path},
                                                                  {"sweep", path, "--json"}}) {
      auto r = run(args);
      EXPECT_EQ(r.code, kInputError) << name << " " << args[0] << ": " << r.out << r.err;
      EXPECT_TRUE(has(r.err, path + ": the snapshot has no allocation history")) << r.err;
      EXPECT_TRUE(has(r.err, "nothing to replay")) << r.err;
      EXPECT_FALSE(has(r.out, "OK")) << r.out;
      EXPECT_FALSE(has(r.out, "0 bytes")) << r.out;
    }
  }
  // The ordinary case still passes.
  const std::string good = sample("resume-tiny/resume-main.rank0.pickle");
  auto pass = run({"gate", good, "--max-peak-reserved", "100GiB"});
  EXPECT_EQ(pass.code, kOk) << pass.err;
  EXPECT_TRUE(pass.out.starts_with("OK: ")) << pass.out;
  EXPECT_EQ(run({"sweep", good, "--max-candidates", "2", "--no-settings"}).code, kOk);
}

// Item 9: with a trace that gave no report among others, gate printed "OK:" and exited 3.
TEST(CliCareless, AGateWithATraceItCouldNotJudgeSaysNotJudged) {
  const std::string good = sample("resume-tiny/resume-main.rank0.pickle");
  const std::string none = noHistory("no-traces.pickle");
  auto text = run({"gate", good, none, "--max-peak-reserved", "100GiB"});
  EXPECT_EQ(text.code, kInputError) << text.err;
  EXPECT_TRUE(text.out.starts_with("NOT JUDGED: 1 of 2 traces gave no report to judge (" + none + ")")) << text.out;
  EXPECT_FALSE(has(text.out, "OK:")) << text.out;
  auto json = run({"gate", good, none, "--max-peak-reserved", "100GiB", "--json"});
  EXPECT_EQ(json.code, kInputError) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_FALSE(j["pass"].get<bool>());
  EXPECT_EQ(j["unjudged"], nlohmann::json::array({none}));
  // A failure among the traces read still says FAIL (and the exit code says some were not read).
  auto fail = run({"gate", good, none, "--max-peak-reserved", "1MiB"});
  EXPECT_EQ(fail.code, kInputError) << fail.err;
  EXPECT_TRUE(fail.out.starts_with("FAIL: " + good + ": predicted peak reserved")) << fail.out;
}

// Item 3: scale --out wrote over a --from capture, its sidecar or the --measured capture, and
// compared the prediction with itself ("error +0 bytes").
TEST(CliCareless, ScaleNeverWritesOverWhatItReads) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  TempDir dir("scale-out");
  for (const char* stem : {"w1-s4096.rank0", "w2-s4096.rank0", "w32-s4096.rank0"})
    for (const char* ext : {".pickle", ".json"})
      fs::copy_file(test::sharedTrace(std::string("scale/") + stem + ext), dir / (std::string(stem) + ext));
  const std::string a = dir / "w1-s4096.rank0.pickle", b = dir / "w2-s4096.rank0.pickle";
  const std::string m = dir / "w32-s4096.rank0.pickle";
  const std::vector<std::string> base{"scale", "--from", a, "--from", b, "--to", "world=32", "--measured", m};
  const auto sizes = [&] {
    std::vector<std::uintmax_t> s;
    for (const auto& f : {a, b, m, dir / "w1-s4096.rank0.json", dir / "w32-s4096.rank0.json"})
      s.push_back(fs::file_size(f));
    return s;
  };
  const auto before = sizes();
  const std::vector<std::pair<std::string, std::string>> refused{
      {a, "--out " + a + " is the trace being read (--from)"},
      {dir / "w1-s4096.rank0.json", "is the trace's capture JSON (read beside " + a + " (--from))"},
      {m, "--out " + m + " is the trace being read (--measured)"},
      {dir / "w32-s4096.rank0.json", "is the trace's capture JSON (read beside " + m + " (--measured))"},
      {"-", "--out -: '-' names no file here"}};
  for (const auto& [out, words] : refused) {
    auto args = base;
    args.insert(args.end(), {"--out", out});
    auto r = run(args);
    EXPECT_EQ(r.code, kUsage) << out << ": " << r.err;
    EXPECT_TRUE(has(r.err, words)) << r.err;
  }
  EXPECT_EQ(sizes(), before);
  EXPECT_FALSE(fs::exists(dir / "-"));
  // A fresh output still works, and --measured compares with the capture, not with itself.
  auto args = base;
  args.insert(args.end(), {"--out", dir / "predicted.pickle", "--json"});
  auto ok = run(args);
  ASSERT_EQ(ok.code, kOk) << ok.err;
  EXPECT_TRUE(fs::exists(dir / "predicted.pickle"));
  EXPECT_EQ(sizes(), before);
  // The honest figures (measured on these captures), not "+0 bytes, 1512 of 1512 equal".
  const auto check = nlohmann::json::parse(ok.out)["check"];
  EXPECT_EQ(check["trace"], m);
  EXPECT_EQ(check["error_peak_reserved"], 10485760);
  EXPECT_EQ(check["requests_equal"], 1426);
  EXPECT_EQ(check["requests_compared"], 1512);
}

// Item 3: the other commands that write follow the same rule.
TEST(CliCareless, EveryCommandThatWritesFollowsTheOutputRule) {
  TempDir dir("writers");
  const std::string trace = dir / "t.pickle";
  fs::copy_file(sample("resume-tiny/resume-main.rank0.pickle"), trace);
  const auto size = fs::file_size(trace);
  auto replay = run({"replay", trace, "--backend", "model", "--save-snapshot", trace});
  EXPECT_EQ(replay.code, kUsage) << replay.err;
  EXPECT_TRUE(has(replay.err, "--save-snapshot " + trace + " is the trace being read")) << replay.err;
  // The recording's sidecar beside --save-snapshot X.pickle is X.json: the trace's own.
  auto sidecar = run({"replay", trace, "--backend", "model", "--save-snapshot", dir / "t.pkl"});
  EXPECT_EQ(sidecar.code, kUsage) << sidecar.err;
  EXPECT_TRUE(has(sidecar.err, "--save-snapshot's capture JSON " + (dir / "t.json") + " is the trace's capture JSON"))
      << sidecar.err;
  EXPECT_EQ(fs::file_size(trace), size);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"export", trace, "--out", "-"}, {"export", trace, "--csv", "-"}, {"synth", "-", "--events", "1000"}}) {
    auto r = run(args);
    EXPECT_EQ(r.code, kUsage) << args[0] << ": " << r.err;
    EXPECT_TRUE(has(r.err, "-: '-' names no file here")) << r.err;
  }
  EXPECT_FALSE(fs::exists("-"));
  EXPECT_EQ(run({"export", trace, "--csv", dir / "t.csv"}).code, kOk);
  EXPECT_EQ(run({"synth", dir / "s.pickle", "--events", "1000"}).code, kOk);
  EXPECT_TRUE(fs::exists(dir / "s.json"));
}

// Item 4: with stdout on a full disk every command exited 0 and the report was lost.
TEST(CliCareless, ALostStdoutIsAnError) {
  const std::string trace = sample("resume-tiny/resume-main.rank0.pickle");
  std::vector<std::vector<std::string>> commands{{"info", trace},
                                                 {"check", trace},
                                                 {"whatif", trace, "--json"},
                                                 {"sweep", trace, "--max-candidates", "2", "--no-settings"},
                                                 {"gate", trace, "--max-peak-reserved", "100GiB"},
                                                 {"info", "--help"}};
  if (!test::sharedTracesDir().empty())
    commands.push_back({"scale", "--from", test::sharedTrace("scale/w2-s4096.rank0.pickle").string(), "--from",
                        test::sharedTrace("scale/w4-s4096.rank0.pickle").string(), "--to", "world=8"});
  for (auto args : commands) {
    std::ofstream full("/dev/full");
    ASSERT_TRUE(full.is_open());
    std::ostringstream err;
    args.insert(args.begin(), "reservoir");
    std::vector<const char*> argv;
    for (const auto& s : args) argv.push_back(s.c_str());
    const int code = runCli(static_cast<int>(argv.size()), argv.data(), full, err);
    EXPECT_EQ(code, kInputError) << args[1] << ": " << err.str();
    EXPECT_TRUE(has(err.str(), "reservoir: standard output: write failed: No space left on device")) << err.str();
    // The same command with somewhere to write still works.
    args.erase(args.begin());
    EXPECT_EQ(run(args).code, kOk) << args[0];
  }
}

// Item 4, through the process's own stdout (what main, `python3 -m reservoir` and an MPI job's
// rank 0 hand runCli): a gate whose verdict cannot be printed does not pass.
TEST(CliCareless, AGateOnAFullStdoutDoesNotPass) {
  const std::string trace = sample("resume-tiny/resume-main.rank0.pickle");
  std::fflush(stdout);
  std::cout.flush();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int fd = ::open("/dev/full", O_WRONLY);
    if (fd < 0 || ::dup2(fd, 1) < 0) _exit(99);
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, 2);
    const char* argv[] = {"reservoir", "gate", trace.c_str(), "--max-peak-reserved", "100GiB"};
    _exit(runCli(5, argv, std::cout, std::cerr));
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), kInputError);
}

// Item 6: --fraction without a capacity capped the run at F x the sidecar's total (or an H200's)
// and said "capacity: unlimited" under "OUT OF MEMORY".
TEST(CliCareless, AFractionNamesTheTotalItIsTakenOf) {
  TempDir dir("fraction");
  const std::string with_json = dir / "t.pickle";
  fs::copy_file(sample("resume-tiny/resume-main.rank0.pickle"), with_json);
  fs::copy_file(sample("resume-tiny/resume-main.rank0.json"), dir / "t.json");
  auto r = run({"whatif", with_json, "--fraction", "0.001", "--json"});
  ASSERT_EQ(r.code, kOk) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["whatif"]["oom"].is_null());
  EXPECT_EQ(j["capacity"], 150109880320);  // device_total in t.json
  EXPECT_EQ(j["capacity_source"], "the device's total memory (device_total in " + (dir / "t.json") + ")");
  auto text = run({"whatif", with_json, "--fraction", "0.001"});
  EXPECT_TRUE(has(text.out, "capacity: 139.80 GiB (the device's total memory (device_total in")) << text.out;
  EXPECT_FALSE(has(text.out, "unlimited")) << text.out;
  // Without a total (no sidecar, no capacity) the fraction would be of an assumed H200: refused.
  for (const char* cmd : {"whatif", "gate", "sweep", "export"}) {
    std::vector<std::string> args{cmd, with_json, "--no-capture-json", "--fraction", "0.9"};
    if (std::string(cmd) == "export") args.insert(args.end(), {"--csv", dir / "t.csv"});
    auto refused = run(args);
    EXPECT_EQ(refused.code, kUsage) << cmd << ": " << refused.out << refused.err;
    EXPECT_TRUE(has(refused.err,
                    "a memory fraction of 0.9 is a fraction of the device's total memory, which "
                    "nothing here gives"))
        << refused.err;
    EXPECT_TRUE(has(refused.err, "give the device's capacity")) << refused.err;
    EXPECT_FALSE(has(refused.out, "OK")) << refused.out;
  }
  EXPECT_FALSE(fs::exists(dir / "t.csv"));
  // With a capacity it is judged.
  auto judged = run({"gate", with_json, "--no-capture-json", "--fraction", "0.9", "--capacity", "80GB"});
  EXPECT_EQ(judged.code, kOk) << judged.err;
  // The recording's own fraction on a total its sidecar does not give: replayed, and said.
  auto recorded =
      run({"whatif", (test::testDataDir() / "traces" / "expandable-fraction-s11.pickle.zst").string(), "--json"});
  ASSERT_EQ(recorded.code, kOk) << recorded.err;
  const auto notes = nlohmann::json::parse(recorded.out)["notes"].dump();
  EXPECT_TRUE(has(notes, "records a memory fraction of 0.03 but not the device's total memory")) << notes;
  EXPECT_TRUE(has(notes, "(assumed)")) << notes;
}

// Item 8: a directory named X.json killed every command with "internal error: basic_filebuf...".
TEST(CliCareless, ASidecarThatIsNoFileIsRefusedWithItsPath) {
  TempDir dir("sidecar");
  const std::string trace = dir / "t.pickle";
  fs::copy_file(sample("resume-tiny/resume-main.rank0.pickle"), trace);
  const std::string w1 = dir / "w1.pickle";  // never opened: the first --from is refused
  const std::vector<std::vector<std::string>> commands{{"info", trace},
                                                       {"check", trace},
                                                       {"whatif", trace},
                                                       {"sweep", trace},
                                                       {"export", trace, "--csv", "/dev/null"},
                                                       {"gate", trace, "--max-peak-reserved", "1GiB"},
                                                       {"scale", "--from", trace, "--from", w1, "--to", "world=4"}};
  auto expectRefused = [&](const std::string& json, const std::string& why) {
    for (const auto& args : commands) {
      auto r = run(args);
      EXPECT_EQ(r.code, kInputError) << args[0] << ": " << r.err;
      EXPECT_TRUE(has(r.err, "the capture JSON " + json + " cannot be used: " + why)) << args[0] << ": " << r.err;
      EXPECT_FALSE(has(r.err, "internal error")) << r.err;
    }
  };
  fs::create_directory(dir / "t.json");
  expectRefused(dir / "t.json", "it is a directory, not a file");
  // A pipe: refused at once, not waited on.
  fs::remove(dir / "t.json");
  ASSERT_EQ(::mkfifo((dir / "t.json").c_str(), 0600), 0);
  auto fifo = run({"info", trace});
  EXPECT_EQ(fifo.code, kInputError);
  EXPECT_TRUE(has(fifo.err, "it is not a regular file")) << fifo.err;
  // A sidecar of 130 MB (sparse here) is refused by its size, before it is read.
  fs::remove(dir / "t.json");
  { std::ofstream(dir / "t.json") << "{}"; }
  fs::resize_file(dir / "t.json", 130'000'000);
  auto huge = run({"info", trace});
  EXPECT_EQ(huge.code, kInputError);
  EXPECT_TRUE(has(huge.err, "it is 130000000 bytes, more than a capture's sidecar holds (at most 16777216)"))
      << huge.err;
  // Without the sidecar the trace reads.
  EXPECT_EQ(run({"info", trace, "--no-capture-json"}).code, kOk);
  fs::remove(dir / "t.json");
  EXPECT_EQ(run({"info", trace}).code, kOk);
}

// Item 8: values out of range were taken modulo 2^64 or 2^32 (device_total -1 became a capacity of
// 2^64 - 1; reset_peaks_after_event 2^32 + 5 became 5).
TEST(CliCareless, SidecarValuesAreRangeChecked) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"sidecar_device_total_negative", "'device_total' is -1, not a device's memory in bytes"},
      {"sidecar_fraction_2", "'fraction' is 2, not a memory fraction in [0, 1]"},
      {"sidecar_reset_2pow32_plus_5", "'reset_peaks_after_event' is 4294967301, not an event index"},
      {"sidecar_stat_2pow64", "'reserved_bytes.all.peak' is 18446744073709551615, past the 64-bit range"},
      {"sidecar_not_object", "it is not a JSON object"}};
  for (const auto& [stem, words] : cases) {
    for (const char* cmd : {"info", "whatif"}) {
      auto r = run({cmd, careless(stem + ".pickle")});
      EXPECT_EQ(r.code, kInputError) << stem << ": " << r.err;
      EXPECT_TRUE(has(r.err, "the capture JSON " + careless(stem + ".json") + " cannot be used: " + words)) << r.err;
    }
    EXPECT_EQ(run({"whatif", careless(stem + ".pickle"), "--no-capture-json"}).code, kOk) << stem;
  }
  // An event past the trace's end is the sidecar's fault, not a --reset-peaks nobody gave.
  auto past = run({"check", careless("sidecar_reset_past_end.pickle")});
  EXPECT_EQ(past.code, kInputError) << past.err;
  EXPECT_FALSE(has(past.err, "--reset-peaks")) << past.err;
  EXPECT_TRUE(has(past.err, "the capture JSON " + careless("sidecar_reset_past_end.json") +
                                " says the peaks were reset after event 1000 (reset_peaks_after_event), but"))
      << past.err;
  EXPECT_EQ(run({"check", careless("sidecar_reset_past_end.pickle"), "--reset-peaks", "event:1"}).code, kOk);
}

// Item 5: scale's parameters are checked wherever they come from (--to, --from, the sidecar), one
// rule, exit 2: --from world=0 or -2 and sidecar world_size 0, -4, 2^63 - 1 were accepted silently.
TEST(CliCareless, ScaleParametersAreCheckedWhereverTheyComeFrom) {
  const std::string good = careless("double_free.pickle");
  const std::vector<std::pair<std::string, std::string>> sidecars{
      {"sidecar_world_0", "world=0: must be at least 1"},
      {"sidecar_world_minus_4", "world=-4: must be at least 1"},
      {"sidecar_world_2pow63_minus_1", "world=9223372036854775807: more ranks than any job has"}};
  for (const auto& [stem, words] : sidecars) {
    auto r = run({"scale", "--from", careless(stem + ".pickle"), "--from", "world=2,seq=4096,batch=1:" + good, "--to",
                  "world=8"});
    EXPECT_EQ(r.code, kUsage) << stem << ": " << r.err;
    EXPECT_TRUE(has(r.err, careless(stem + ".json") + ": the capture JSON's " + words)) << r.err;
  }
  for (const char* bad : {"world=0,seq=4096", "world=-2,seq=4096", "world=2,seq=0", "world=2,batch=-1"}) {
    auto r = run({"scale", "--from", std::string(bad) + ":" + good, "--from", "world=4,seq=4096:" + good, "--to",
                  "world=8"});
    EXPECT_EQ(r.code, kUsage) << bad << ": " << r.err;
    EXPECT_TRUE(has(r.err, "must be at least 1")) << r.err;
  }
  for (const char* bad : {"world=0", "world=x", "seq=-3", "world=99999999999"}) {
    auto r = run({"scale", "--from", "world=2:" + good, "--from", "world=4:" + good, "--to", bad});
    EXPECT_EQ(r.code, kUsage) << bad << ": " << r.err;  // a bad value was exit 3
  }
}

// Item 5: seq x batch overflowed int64: --to seq=2^62 reported a peak of 1.03 GiB and exit 0.
TEST(CliCareless, ScaleSizesPastAnyDeviceAreRefused) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  const std::string a = test::sharedTrace("scale/w4-s2048.rank0.pickle").string();
  const std::string b = test::sharedTrace("scale/w4-s4096.rank0.pickle").string();
  for (const char* to : {"seq=4611686018427387904", "seq=4096,batch=2305843009213693952", "seq=9223372036854775807",
                         "seq=268435456"}) {  // 2^28 failed with "segment_alloc at 0x0 ... matches no later segment"
    auto r = run({"scale", "--from", a, "--from", b, "--to", to, "--json"});
    EXPECT_EQ(r.code, kUsage) << to << ": " << r.out << r.err;
    EXPECT_TRUE(has(r.err, "more than any GPU's memory")) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_EQ(run({"scale", "--from", a, "--from", b, "--to", "seq=8192"}).code, kOk);
}

// Item 7: four --to lists of 100 values made 10^8 targets; the run died at 7.3 GB, blaming "a
// damaged or hostile file". Refused up front, naming the grid's size and the bound.
TEST(CliCareless, ScaleGridsAreBounded) {
  std::string hundred;
  for (int i = 1; i <= 100; ++i) hundred += (i > 1 ? "," : "") + std::to_string(i);
  const std::string good = careless("double_free.pickle");
  const std::string to = "world=" + hundred + ",seq=" + hundred + ",batch=" + hundred + ",dim=" + hundred;
  auto r = run({"scale", "--from", "world=2:" + good, "--from", "world=4:" + good, "--to", to});
  EXPECT_EQ(r.code, kUsage) << r.err;
  EXPECT_TRUE(has(r.err, "a grid of 100 world x 100 seq x 100 batch x 100 dim = 1e+08 targets is more than the 100000"))
      << r.err;
  // Two --to grids that are each small enough but together too many.
  const std::string half = "world=" + hundred + ",seq=" + hundred + ",batch=1,2,3,4,5,6";
  r = run({"scale", "--from", "world=2:" + good, "--from", "world=4:" + good, "--to", half, "--to", half});
  EXPECT_EQ(r.code, kUsage) << r.err;
  EXPECT_TRUE(has(r.err, "past the 100000 one run may have")) << r.err;
}

// Item 9: '-' opened a file named '-'.
TEST(CliCareless, DashIsNoFile) {
  for (const char* cmd : {"info", "check", "whatif", "gate", "sweep"}) {
    std::vector<std::string> args{cmd, "-"};
    if (std::string(cmd) == "gate") args.insert(args.end(), {"--max-peak-reserved", "1GiB"});
    auto r = run(args);
    EXPECT_EQ(r.code, kUsage) << cmd << ": " << r.err;
    EXPECT_TRUE(has(r.err, "'-': a snapshot is not read from standard input; give its file")) << r.err;
  }
}

// Item 9: an annotation's placement had "depth": 4294967295 in sweep --json.
TEST(CliCareless, SweepJsonShowsNoSentinelDepth) {
  auto r = run({"sweep", sample("resume-tiny/resume-main.rank0.pickle"), "--json", "--no-settings", "--top", "1000",
                "--max-candidates", "1000"});
  ASSERT_EQ(r.code, kOk) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  bool annotation = false;
  for (const auto& c : j["candidates"]) {
    EXPECT_NE(c["depth"], 4294967295u);
    if (c["edits"].dump().find("annotation:") != std::string::npos) {
      annotation = true;
      EXPECT_TRUE(c["depth"].is_null()) << c.dump();
    }
  }
  EXPECT_TRUE(annotation) << "no annotation candidate to check";
}

// Item 9: an oom with device_free 0 and nothing reserved (a capacity of 0 bytes) gave exit 2 about
// an --overhead nobody gave.
TEST(CliCareless, AnOomThatTheRecordingContradictsGivesNoCapacity) {
  auto r = run({"whatif", careless("oom_device_free_zero.pickle"), "--json"});
  ASSERT_EQ(r.code, kOk) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["capacity"].is_null());
  EXPECT_TRUE(has(j["capacity_source"].get<std::string>(),
                  "the recorded oom entries imply a capacity of 0 bytes (device_free + reserved), but the recording "
                  "itself reserves up to 2097152 bytes"))
      << j["capacity_source"];
  EXPECT_FALSE(has(r.err, "overhead")) << r.err;
  // A real oom's capacity is still derived (the recording stays within it).
  auto same = run({"whatif", careless("oom_same_peak.pickle"), "--json"});
  ASSERT_EQ(same.code, kOk) << same.err;
  EXPECT_EQ(nlohmann::json::parse(same.out)["capacity"], 20971520);
}

// Item 9: with a fraction so small the edited run fails at event 0, whatif said "no edits: run
// peak 510.00 MiB -> 0 bytes (saves 510.00 MiB ...)".
TEST(CliCareless, AnEarlierOutOfMemoryIsNoSaving) {
  auto r = run({"whatif", sample("resume-tiny/resume-main.rank0.pickle"), "--fraction", "0.000001"});
  ASSERT_EQ(r.code, kOk) << r.err;
  const std::string verdict = r.out.substr(0, r.out.find('\n'));
  EXPECT_FALSE(has(verdict, "saves")) << verdict;
  EXPECT_FALSE(has(verdict, "no edits")) << verdict;
  EXPECT_TRUE(verdict.starts_with("memory fraction 1e-06: ")) << verdict;
  EXPECT_TRUE(has(verdict, "lower only because the edited run runs out of memory")) << verdict;
  // A real saving is still one.
  auto cleanup = run({"whatif", sample("resume-tiny/resume-main.rank0.pickle"), "--cleanup",
                      "after:state_dict_loader.py:load", "--probe", "after:state_dict_loader.py:load"});
  ASSERT_EQ(cleanup.code, kOk) << cleanup.err;
  EXPECT_FALSE(has(cleanup.out, "lower only because")) << cleanup.out;
}

// Item 9: scale said "the baseline reproduces the recording" of a predicted trace.
TEST(CliCareless, APredictedTraceHasNoRecording) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  auto r = run({"scale", "--from", test::sharedTrace("scale/w2-s4096.rank0.pickle").string(), "--from",
                test::sharedTrace("scale/w4-s4096.rank0.pickle").string(), "--to", "world=8"});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_FALSE(has(r.out, "reproduces the recording")) << r.out;
  EXPECT_TRUE(has(r.out, "(a predicted trace: there is no recording to compare with)")) << r.out;
  auto whatif = run({"whatif", sample("resume-tiny/resume-main.rank0.pickle")});
  EXPECT_TRUE(has(whatif.out, "(the baseline reproduces the recording)")) << whatif.out;
}

}  // namespace
}  // namespace reservoir::cli
