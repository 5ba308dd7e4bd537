// `reservoir report` (replay/report.h): the curves' decimation, the Markdown (golden files, and equal
// to the JSON's figures), the page's self-containment and size, the command line.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "cli_runner.h"
#include "reservoir/replay/report.h"
#include "reservoir/simulator/sizes.h"
#include "split_words.h"
#include "test_paths.h"

namespace reservoir::replay {
namespace {

namespace fs = std::filesystem;

TEST(ReportCurves, EachColumnHoldsTheExtremesOfTheStepSeries) {
  // Positions 0..9, values after each; start 7 before the first.
  const std::vector<std::int64_t> at{1, 2, 3, 5, 8}, v{3, 9, 4, 6, 1};
  const CurveAxis axis{CurveAxis::Kind::kEvents, 0, 10, 5};  // columns [0,2) [2,4) [4,6) [6,8) [8,10)
  const Curve c = decimateSteps(at, v, 7, axis);
  EXPECT_EQ(c.min, (std::vector<std::int64_t>{3, 4, 4, 6, 1}));
  EXPECT_EQ(c.max, (std::vector<std::int64_t>{7, 9, 6, 6, 1}));
}

TEST(ReportCurves, AColumnWithoutPointsCarriesTheValueAndAPointAtItsStartHidesTheOldOne) {
  const std::vector<std::int64_t> at{0, 4}, v{5, 2};
  const CurveAxis axis{CurveAxis::Kind::kTime, 0, 8, 4};  // [0,2) [2,4) [4,6) [6,8)
  const Curve c = decimateSteps(at, v, 100, axis);
  EXPECT_EQ(c.min, (std::vector<std::int64_t>{5, 5, 2, 2}));
  EXPECT_EQ(c.max, (std::vector<std::int64_t>{5, 5, 2, 2}));  // 100 never holds: the first point is at 0
}

TEST(ReportCurves, ManyPointsInAColumnKeepTheirPeak) {
  std::vector<std::int64_t> at, v;
  for (int i = 0; i < 1000; ++i) {
    at.push_back(i);
    v.push_back(i == 617 ? 1'000'000 : i % 7);
  }
  const CurveAxis axis{CurveAxis::Kind::kEvents, 0, 1000, 10};
  const Curve c = decimateSteps(at, v, 0, axis);
  EXPECT_EQ(c.max[6], 1'000'000);
  EXPECT_EQ(c.min[6], 0);
  EXPECT_EQ(*std::max_element(c.max.begin(), c.max.end()), 1'000'000);
}

TEST(SplitWords, QuotesAndEscapesAsAShellReadsThemWithNoExpansion) {
  auto w = cli::splitWords(R"(--cleanup 'after:a b.py:load' --set "expandable_segments:True" x\ y $HOME *)");
  ASSERT_TRUE(w.ok()) << w.message();
  EXPECT_EQ(*w, (std::vector<std::string>{"--cleanup", "after:a b.py:load", "--set", "expandable_segments:True", "x y",
                                          "$HOME", "*"}));
  auto q = cli::splitWords(R"("a \"b\" \\ \n" '')");
  ASSERT_TRUE(q.ok()) << q.message();
  EXPECT_EQ(*q, (std::vector<std::string>{R"(a "b" \ \n)", ""}));
  EXPECT_FALSE(cli::splitWords("--cleanup 'after:x").ok());
  EXPECT_FALSE(cli::splitWords("--cleanup \"after:x").ok());
  EXPECT_FALSE(cli::splitWords("abc\\").ok());
  EXPECT_TRUE(cli::splitWords("   ")->empty());
}

// ---- Built from the bundled samples (run from the source root so paths are as written) ----

class InSourceRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    previous_ = fs::current_path();
    fs::current_path(RESERVOIR_SOURCE_DIR);
  }
  void TearDown() override { fs::current_path(previous_); }
  fs::path previous_;
};

const char* kTiny0 = "traces/samples/resume-tiny/resume-main.rank0.pickle";
const char* kTiny1 = "traces/samples/resume-tiny/resume-main.rank1.pickle";
const char* kExp0 = "traces/samples/resume-expandable/resume-main.rank0.pickle";

Expected<ReportResult> report(const std::vector<std::string>& paths, const ReportText& text) {
  std::vector<Trace> traces;
  for (const auto& p : paths) {
    auto t = readTrace(p);
    if (!t) return t.status();
    traces.push_back(std::move(*t));
  }
  return makeReport(traces, text);
}

ReportText oneRankText() {
  ReportText t;
  t.edits.probe = {"after:state_dict_loader.py:load"};
  WhatIfText post;
  post.cleanup = {"after:state_dict_loader.py:load"};
  WhatIfText pre;
  pre.cleanup = {"before:broadcast_weights"};
  t.variants = {{"post-load", post}, {"pre-broadcast", pre}};
  return t;
}

ReportText twoRankText() {
  ReportText t;
  t.edits.cleanup = {"after:state_dict_loader.py:load"};
  WhatIfText expandable;
  expandable.device.set = "expandable_segments:True";
  t.variants = {{"expandable", expandable}};
  return t;
}

void expectGolden(const std::string& name, const std::string& text) {
  const fs::path golden = test::testDataDir() / "report" / name;
  if (std::getenv("RESERVOIR_UPDATE_GOLDEN")) {
    std::ofstream(golden, std::ios::binary) << text;
    GTEST_SKIP() << "wrote " << golden;
  }
  std::ifstream in(golden, std::ios::binary);
  ASSERT_TRUE(in) << golden << " is missing (RESERVOIR_UPDATE_GOLDEN=1 writes it)";
  std::ostringstream want;
  want << in.rdbuf();
  EXPECT_EQ(text, want.str()) << "the Markdown differs from " << golden;
}

TEST_F(InSourceRoot, MarkdownGoldenOneRankThreeRuns) {
  auto r = report({kTiny0}, oneRankText());
  ASSERT_TRUE(r.ok()) << r.message();
  expectGolden("resume-tiny-one-rank.md", r->markdown);
}

TEST_F(InSourceRoot, MarkdownGoldenTwoRanks) {
  auto r = report({kTiny0, kTiny1}, twoRankText());
  ASSERT_TRUE(r.ok()) << r.message();
  expectGolden("resume-tiny-two-ranks.md", r->markdown);
}

// Every figure of the Markdown's rows is the JSON table's, formatted as the CLI prints it, and the
// JSON table's are the what-if reports' (whatIfJson) of the same run.
void expectMarkdownIsTheJson(const ReportResult& r) {
  const auto& j = r.json;
  std::istringstream lines(r.markdown);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("| ", 0) == 0 && line.find("| variant |") != 0) rows.push_back(line);
  ASSERT_EQ(rows.size(), j["table"].size());
  const auto size = [](const nlohmann::json& v) { return sim::formatSize(v.get<std::uint64_t>()); };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = j["table"][i];
    EXPECT_NE(rows[i].find("| " + size(row["peak_reserved"])), std::string::npos) << rows[i];
    EXPECT_NE(rows[i].find("| " + size(row["peak_allocated"])), std::string::npos) << rows[i];
    for (const auto& [point, cell] : row["probes"].items())
      if (!cell["reserved"].is_null()) {
        EXPECT_NE(rows[i].find("| " + size(cell["reserved"])), std::string::npos);
      }
    // The table is the runs' what-if reports.
    const auto& variant = *std::find_if(j["variants"].begin(), j["variants"].end(),
                                        [&](const nlohmann::json& v) { return v["name"] == row["variant"]; });
    const auto& run = variant["ranks"][row["rank"].get<std::size_t>()]["whatif"];
    EXPECT_EQ(row["peak_reserved"], run["peak_reserved"]);
    EXPECT_EQ(row["peak_allocated"], run["peak_allocated"]);
    for (const auto& [point, cell] : row["probes"].items())
      if (cell["occurrences"] == 1) {
        EXPECT_EQ(cell["reserved"], run["probes"][point]["reserved"]);
      }
  }
}

TEST_F(InSourceRoot, TheMarkdownEqualsTheJsonsFigures) {
  for (const auto& [paths, text] : {std::pair{std::vector<std::string>{kTiny0}, oneRankText()},
                                    std::pair{std::vector<std::string>{kTiny0, kTiny1}, twoRankText()}}) {
    auto r = report(paths, text);
    ASSERT_TRUE(r.ok()) << r.message();
    expectMarkdownIsTheJson(*r);
  }
}

TEST_F(InSourceRoot, TheMotivatingTableHasTheMeasuredFigures) {
  // resume-expandable rank 0: reserved after the load 6.86 GiB, 4.14 GiB with the cleanup; the peak stays.
  ReportText t;
  WhatIfText post;
  post.cleanup = {"after:state_dict_loader.py:load"};
  t.variants = {{"post-load", post}};
  auto r = report({kExp0}, t);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_NE(r->markdown.find("| recording | 6.86 GiB |"), std::string::npos) << r->markdown;
  EXPECT_NE(r->markdown.find("| post-load | 4.14 GiB (-2.71 GiB) |"), std::string::npos) << r->markdown;
  EXPECT_NE(r->markdown.find("25.33 GiB (same)"), std::string::npos) << r->markdown;
  const auto& row = r->json["table"][1];
  EXPECT_EQ(row["probes"]["after:state_dict_loader.py:load"]["reserved"], 4448059392);
  EXPECT_EQ(r->json["table"][0]["probes"]["after:state_dict_loader.py:load"]["reserved"], 7363100672);
  EXPECT_EQ(row["peak_reserved"], 27197964288);
}

TEST_F(InSourceRoot, AReportOnAPreparedTraceIsTheReportThatPreparesItsOwn) {
  // The GUI's session prepared the trace once; the report on it has the same figures.
  auto t = readTrace(kExp0);
  ASSERT_TRUE(t.ok()) << t.message();
  const std::size_t dev = t->snap().busiestDevice();
  auto prepared = prepareTrace(t->snapshot, dev, t->environment());
  ASSERT_TRUE(prepared.ok()) << prepared.message();
  auto options = parseReportOptions(oneRankText());
  ASSERT_TRUE(options.ok()) << options.message();
  const ReportInput input{*t, dev, t->environment()};
  auto on = buildReportOn(input, *prepared, *options);
  auto own = buildReport({input}, *options);
  ASSERT_TRUE(on.ok()) << on.message();
  ASSERT_TRUE(own.ok()) << own.message();
  EXPECT_EQ(reportJson(*on)["table"], reportJson(*own)["table"]);
  EXPECT_EQ(reportMarkdown(*on), reportMarkdown(*own));
  ASSERT_EQ(on->ranks[0].runs.size(), 3u);
  // A device with another total memory prepares its own trace, and a prepared trace of another
  // device is refused rather than reported on.
  options->edited.capacity = 150109880320;
  auto other = buildReportOn(input, *prepared, *options);
  ASSERT_TRUE(other.ok()) << other.message();
  EXPECT_EQ(other->ranks[0].runs[0].report.capacity, std::optional<sim::ByteCount>(150109880320));
  auto t2 = readTrace(kTiny0);
  ASSERT_TRUE(t2.ok());
  EXPECT_FALSE(buildReportOn({*t2, 0, t2->environment()}, *prepared, *options).ok());
}

TEST_F(InSourceRoot, TheReportsDeviceAndDemandsApplyToEveryRun) {
  // docs/ci.md's offload case: the wake-up's 138 GiB does not fit after the recorded offload
  // (146397069312 bytes free), and fits with the cleanup (149253390336 bytes measured free; the
  // model's 139.00 GiB).
  ReportText t;
  t.edits.device.capacity = "150109880320";
  t.edits.device.overhead = "787283968";
  t.edits.demand = {"138GiB@after:offload.py:main#1"};
  WhatIfText cleanup;
  cleanup.cleanup = {"after:offload.py:offload"};
  t.variants = {{"cleanup", cleanup}};
  auto r = report({"tests/data/traces/offload/offload-main.pickle.zst"}, t);
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->model.variants.size(), 2u);  // a capacity and a demand edit nothing: no "edited" run
  const auto& table = r->json["table"];
  EXPECT_EQ(table[0]["demands"]["138GiB@after:offload.py:main#1"]["fits"], false);
  EXPECT_EQ(table[0]["demands"]["138GiB@after:offload.py:main#1"]["least_free"], 146397069312);
  EXPECT_EQ(table[1]["demands"]["138GiB@after:offload.py:main#1"]["fits"], true);
  EXPECT_NE(r->markdown.find("| recording | 2.72 GiB | does NOT fit (136.34 GiB free) |"), std::string::npos)
      << r->markdown;
  EXPECT_NE(r->markdown.find("| cleanup | 66.00 MiB (-2.66 GiB) | fits (139.00 GiB free) |"), std::string::npos);
  // Every run is on the report's device.
  for (const auto& v : r->json["variants"]) EXPECT_EQ(v["ranks"][0]["capacity"], 150109880320);
}

TEST_F(InSourceRoot, ThePageFetchesNothingAndStaysSmall) {
  ReportText t = twoRankText();
  t.sweep = true;
  auto r = report({kExp0, "traces/samples/resume-tiny/resume-main.rank1.pickle"}, t);
  ASSERT_TRUE(r.ok()) << r.message();
  const std::string& html = r->html;
  EXPECT_LE(html.size(), 3u << 20);
  // No URL but the SVG namespace.
  const std::regex url(R"(https?:|//[a-zA-Z0-9.-]+\.[a-z]{2,}/)", std::regex::icase);
  std::string rest = std::regex_replace(html, std::regex(R"(http://www\.w3\.org/2000/svg)"), "");
  EXPECT_FALSE(std::regex_search(rest, url)) << "an URL in the page";
  for (const char* bad : {" src=", "<link", "@import", "url(", "<iframe", "<img", "fetch(", "XMLHttpRequest",
                          "setInterval", "setTimeout", "requestAnimationFrame", "@font-face"})
    EXPECT_EQ(html.find(bad), std::string::npos) << bad;
  // The figures are text in the page, as the CLI prints them.
  EXPECT_NE(html.find(r->model.verdict.substr(0, 40)), std::string::npos);
  EXPECT_NE(html.find(">25.33 GiB<"), std::string::npos);
  EXPECT_NE(html.find("id=\"sweep-table\""), std::string::npos);
  EXPECT_NE(html.find("id=\"rank-table\""), std::string::npos);
  // In order: verdict, curves, peak, pins, sweep, ranks, facts.
  std::size_t last = 0;
  for (const char* id : {"id=\"verdict\"", "id=\"curves\"", "id=\"peak\"", "id=\"pins\"", "id=\"sweep\"",
                         "id=\"ranks\"", "id=\"facts\""}) {
    const auto at = html.find(id);
    ASSERT_NE(at, std::string::npos) << id;
    EXPECT_GT(at, last) << id;
    last = at;
  }
}

TEST_F(InSourceRoot, TraceTextCannotBreakOutOfThePage) {
  // A trace path with markup and a URL in it is shown as text.
  const fs::path dir = fs::temp_directory_path() / "reservoir-report-escape";
  fs::create_directories(dir);
  const fs::path odd = dir / "<script>alert(1)<%2fscript> https:x.pickle";
  fs::copy_file(kTiny0, odd, fs::copy_options::overwrite_existing);
  auto r = report({odd.string(), kTiny1}, ReportText{});  // two ranks: the Markdown names them
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(r->html.find("https:x"), std::string::npos);
  EXPECT_NE(r->markdown.find("&lt;script>"), std::string::npos);
  EXPECT_EQ(r->markdown.find("<script>"), std::string::npos);
  fs::remove_all(dir);
}

TEST_F(InSourceRoot, AMarkdownOfManyRanksStaysUnderTheCommentLimit) {
  auto r = report({kTiny0}, oneRankText());
  ASSERT_TRUE(r.ok()) << r.message();
  Report many = r->model;
  for (int i = 0; i < 1500; ++i) {
    ReportRank copy = r->model.ranks[0];
    copy.trace.path = "job42/ranks/rank" + std::to_string(i) + ".pickle";
    many.ranks.push_back(std::move(copy));
  }
  const std::string md = reportMarkdown(many);
  EXPECT_LE(md.size(), kMarkdownLimit);
  EXPECT_NE(md.find("worst rank"), std::string::npos);
}

TEST_F(InSourceRoot, AVariantNameIsUniqueAndAnEditThatNamesNothingSaysWhichVariant) {
  ReportText t;
  WhatIfText a;
  a.cleanup = {"after:nowhere.py:nothing"};
  t.variants = {{"x", a}};
  auto r = report({kTiny0}, t);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("variant x"), std::string::npos) << r.message();
  t.variants = {{"recording", WhatIfText{}}};
  auto dup = report({kTiny0}, t);
  ASSERT_FALSE(dup.ok());
  EXPECT_TRUE(dup.status().isUsage());
}

// ---- The command line ----

using test::runReservoir;

class CliReport : public InSourceRoot {};  // 'Cli*': the ASan build runs these too

TEST_F(CliReport, WritesBothFilesForOneAndSeveralRanks) {
  const fs::path dir = fs::temp_directory_path() / "reservoir-report-cli";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string html = (dir / "r.html").string(), md = (dir / "r.md").string();
  auto one = runReservoir({"report", kTiny0, "--variant", "post-load=--cleanup 'after:state_dict_loader.py:load'",
                           "--html", html, "--markdown", md});
  ASSERT_EQ(one.code, cli::kOk) << one.err;
  EXPECT_TRUE(fs::file_size(html) > 1000);
  EXPECT_TRUE(fs::file_size(md) > 100);
  EXPECT_NE(one.out.find("wrote " + html), std::string::npos);
  auto two = runReservoir({"report", kTiny0, kTiny1, "--sweep", "--max-candidates", "8", "--jobs", "1", "--html", html,
                           "--markdown", md, "--json"});
  ASSERT_EQ(two.code, cli::kOk) << two.err;
  const auto j = nlohmann::json::parse(two.out);
  EXPECT_EQ(j["ranks"].size(), 2u);
  EXPECT_FALSE(j["sweep"].is_null());
  std::ifstream in(md);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("| recording | resume-main.rank0.pickle"), std::string::npos) << text.str();
  fs::remove_all(dir);
}

TEST_F(CliReport, UsageErrors) {
  const std::string out = (fs::temp_directory_path() / "reservoir-report-usage.html").string();
  EXPECT_EQ(runReservoir({"report", kTiny0}).code, cli::kUsage);  // no output
  EXPECT_EQ(runReservoir({"report", kTiny0, "--html", out, "--variant", "noequals"}).code, cli::kUsage);
  EXPECT_EQ(runReservoir({"report", kTiny0, "--html", out, "--variant", "x=--cleanup 'after:x"}).code, cli::kUsage);
  auto unknown = runReservoir({"report", kTiny0, "--html", out, "--variant", "x=--clean after:x"});
  EXPECT_EQ(unknown.code, cli::kUsage);
  EXPECT_NE(unknown.err.find("--variant x"), std::string::npos) << unknown.err;
  EXPECT_EQ(runReservoir({"report", kTiny0, "--html", out, "--variant", "a=", "--variant", "a="}).code, cli::kUsage);
  // Never over the input, nor both outputs in one file.
  EXPECT_EQ(runReservoir({"report", kTiny0, "--html", kTiny0}).code, cli::kUsage);
  EXPECT_EQ(runReservoir({"report", kTiny0, "--html", out, "--markdown", out}).code, cli::kUsage);
  EXPECT_FALSE(fs::exists(out));
}

// The capture JSON beside a trace (X.json for X.pickle) is an input too: refused before any replay.
TEST_F(CliReport, NeverWritesOverATracesCaptureJson) {
  const fs::path dir = fs::temp_directory_path() / "reservoir-report-sidecar";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path trace = dir / "x.pickle", sidecar = dir / "x.json";
  fs::copy_file(kTiny0, trace);
  auto r = runReservoir({"report", trace.string(), "--markdown", sidecar.string()});
  EXPECT_EQ(r.code, cli::kUsage) << r.err;
  EXPECT_NE(r.err.find("--markdown"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(sidecar));
  fs::remove_all(dir);
}

// docs/ci.md's `reservoir report` commands run (outputs into a temporary folder), and the table it
// shows is the one the first writes.
TEST_F(CliReport, TheCommandsAndTheTableInDocsCiAreTheReportsOwn) {
  std::ifstream in("docs/ci.md");
  ASSERT_TRUE(in);
  std::vector<std::string> commands, table;
  std::string pending;
  bool fenced = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    // The table after the command that writes memory-report.md.
    const bool wrote = !commands.empty() && commands.back().find("memory-report.md") != std::string::npos;
    if (!fenced && wrote && line.rfind("| ", 0) == 0 && table.size() < 10) table.push_back(line);
    if (!fenced || (pending.empty() && line.rfind("reservoir report ", 0) != 0)) continue;
    const bool more = !line.empty() && line.back() == '\\';
    pending += more ? line.substr(0, line.size() - 1) : line;
    if (!more) {
      commands.push_back(pending);
      pending.clear();
    }
  }
  ASSERT_GE(commands.size(), 2u);
  const fs::path dir = fs::temp_directory_path() / "reservoir-report-docs";
  fs::create_directories(dir);
  for (const auto& command : commands) {
    if (command.find("TRACE...") != std::string::npos) continue;  // the synopsis
    auto words = cli::splitWords(command);
    ASSERT_TRUE(words.ok()) << command;
    std::vector<std::string> args(words->begin() + 1, words->end());
    for (std::size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == "--html" || args[i] == "--markdown") args[i + 1] = (dir / args[i + 1]).string();
    const auto r = runReservoir(args);
    EXPECT_EQ(r.code, cli::kOk) << command << "\n" << r.err;
  }
  std::ifstream md(dir / "memory-report.md");
  std::stringstream written;
  written << md.rdbuf();
  ASSERT_FALSE(table.empty());
  for (const auto& row : table) EXPECT_NE(written.str().find(row + "\n"), std::string::npos) << row;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace reservoir::replay
