// The CLI in-process: exit codes, --json fields, clear errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "cli_runner.h"
#include "test_paths.h"

namespace reservoir::cli {
namespace {

test::CliResult run(std::vector<std::string> args) { return test::runReservoir(std::move(args)); }

std::string sample(const std::string& rel) { return (test::samplesDir() / rel).string(); }

TEST(Cli, InfoJsonHasTheDocumentedFields) {
  auto r = run({"info", sample("resume-tiny/resume-main.rank0.pickle"), "--json"});
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
  // A capture JSON that disagrees makes check fail.
  EXPECT_EQ(run({"check", sample("resume-tiny/resume-main.rank0.pickle")}).code,
            kFailed);  // peaks reset by the capture
  EXPECT_EQ(
      run({"check", sample("resume-tiny/resume-main.rank0.pickle"), "--reset-peaks", "before:resume.py:train_step#1"})
          .code,
      kOk);
}

TEST(Cli, BadInputAndUsage) {
  auto missing = run({"info", "/nonexistent/x.pickle"});
  EXPECT_EQ(missing.code, kInputError);
  EXPECT_NE(missing.err.find("/nonexistent/x.pickle"), std::string::npos);
  EXPECT_EQ(run({"frobnicate"}).code, kUsage);
  EXPECT_EQ(run({"info"}).code, kUsage);
  auto bad_point = run({"whatif", sample("resume-tiny/resume-main.rank0.pickle"), "--cleanup", "after:nope_function"});
  EXPECT_EQ(bad_point.code, kInputError);
  EXPECT_NE(bad_point.err.find("closest frames"), std::string::npos);
  auto help = run({"whatif", "--help"});
  EXPECT_EQ(help.code, kOk);
  EXPECT_NE(help.out.find("--cleanup"), std::string::npos);
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

}  // namespace
}  // namespace reservoir::cli
