// One rule for the edited run: the same edits with --capacity, --overhead, --fraction and --set
// give the same figures through every entry point (the library's whatif, `reservoir whatif`,
// a `sweep` candidate equal to the edit, `gate`, the snapshot `export` writes, and the GUI
// session's what-if), each run through its real code path.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "reservoir/replay/session.h"
#include "reservoir/replay/trace.h"
#include "reservoir/replay/whatif.h"
#include "reservoir/traces/reader.h"
#include "test_paths.h"

namespace reservoir::replay {
namespace {

struct Case {
  std::string trace;
  std::string cleanup;  // a point the sweep also tries ("before:synth.py:main")
  std::optional<std::string> probe;
  std::vector<std::string> device_flags;  // --capacity/--overhead/--fraction/--set
  EditedRunOptions device;                // the same, for the library
};

struct Figures {
  std::int64_t peak_reserved = 0;
  bool oom = false;
  std::int64_t final_reserved = 0;
  std::optional<std::int64_t> probe;
};

std::vector<std::string> editFlags(const Case& c) {
  std::vector<std::string> f = {"--cleanup", c.cleanup};
  if (c.probe) f.insert(f.end(), {"--probe", *c.probe});
  f.insert(f.end(), c.device_flags.begin(), c.device_flags.end());
  return f;
}

WhatIfOptions libraryOptions(const Case& c) {
  WhatIfOptions o;
  static_cast<EditedRunOptions&>(o) = c.device;
  o.edits.push_back(*parseCleanup(c.cleanup));
  if (c.probe) o.edits.push_back(*parseProbe(*c.probe));
  return o;
}

Figures fromReport(const WhatIfReport& r) {
  return {r.whatif.peak_reserved.bytes, r.whatif.oom.has_value(), r.whatif.final_reserved,
          r.whatif.probes.empty() ? std::nullopt : std::optional(r.whatif.probes.front().reserved)};
}

Figures viaLibrary(const Case& c) {
  auto snap = readTrace(c.trace);
  EXPECT_TRUE(snap.ok()) << snap.message();
  const auto facts = findCaptureFacts(c.trace);
  ReplayEnvironment env;
  if (facts) env.capture = std::make_shared<const CaptureFacts>(*facts);
  auto rep = runWhatIf(snap->snapshot, snap->snap().busiestDevice(), env, libraryOptions(c));
  EXPECT_TRUE(rep.ok()) << rep.message();
  return rep.ok() ? fromReport(*rep) : Figures{};
}

Figures viaSession(const Case& c) {
  auto loaded = loadTraceFile(c.trace, std::nullopt, nullptr, {});
  EXPECT_TRUE(loaded) << loaded.message();
  auto model = buildModelStage(**loaded, 256, nullptr, {});
  EXPECT_TRUE(model) << model.message();
  auto rep = runWhatIfPrepared(**model, libraryOptions(c));
  EXPECT_TRUE(rep.ok()) << rep.message();
  return rep.ok() ? fromReport(*rep) : Figures{};
}

nlohmann::json runJson(std::vector<std::string> args, int expect_code) {
  const auto r = test::runReservoir(std::move(args));
  EXPECT_EQ(r.code, expect_code) << r.err;
  return nlohmann::json::parse(r.out, nullptr, false);
}

Figures viaWhatIfCommand(const Case& c) {
  std::vector<std::string> args = {"whatif", c.trace, "--json"};
  for (auto& f : editFlags(c)) args.push_back(f);
  const auto j = runJson(args, 0);
  const auto& w = j.at("whatif");
  Figures f{w.at("peak_reserved").get<std::int64_t>(), !w.at("oom").is_null(),
            w.at("final_reserved").get<std::int64_t>(), std::nullopt};
  if (c.probe) f.probe = w.at("probes").at(*c.probe).at("reserved").get<std::int64_t>();
  return f;
}

// gate reports the peak and whether it runs out of memory.
std::pair<std::int64_t, bool> viaGate(const Case& c, bool expect_oom) {
  std::vector<std::string> args = {"gate", c.trace, "--json", "--max-peak-reserved", "1000GiB"};
  for (auto& f : editFlags(c)) args.push_back(f);
  const auto j = runJson(args, expect_oom ? 1 : 0);
  const auto& t = j.at("traces").at(0);
  return {t.at("peak_reserved").get<std::int64_t>(), t.at("oom").get<bool>()};
}

// The sweep's candidate that is exactly the cleanup: its peak.
std::optional<std::int64_t> viaSweep(const Case& c) {
  std::vector<std::string> args = {"sweep", c.trace, "--json", "--no-settings", "--top", "1000"};
  for (auto& f : c.device_flags) args.push_back(f);
  const auto j = runJson(args, 0);
  for (const auto& cand : j.at("candidates"))
    if (cand.at("edits") == nlohmann::json::array({"--cleanup", c.cleanup}))
      return cand.at("peak_reserved").get<std::int64_t>();
  return std::nullopt;
}

// The exported snapshot, read back: its recorded peak and final reserved, and its oom events.
Figures viaExport(const Case& c) {
  const auto out =
      std::filesystem::temp_directory_path() / ("reservoir-edited-run-" + std::to_string(::getpid()) + ".pickle");
  std::vector<std::string> args = {"export", c.trace, "--out", out.string()};
  for (auto& f : editFlags(c)) args.push_back(f);
  const auto r = test::runReservoir(args);
  EXPECT_EQ(r.code, 0) << r.err;
  auto snap = readTrace(out.string());
  std::filesystem::remove(out);
  EXPECT_TRUE(snap.ok()) << snap.message();
  if (!snap.ok()) return {};
  auto p = prepareTrace(snap->snapshot, snap->snap().busiestDevice(), ReplayEnvironment{});
  EXPECT_TRUE(p.ok()) << p.message();
  if (!p.ok()) return {};
  Figures f;
  f.peak_reserved = p->recorded_peak_reserved;
  std::int64_t reserved = 0;
  for (const auto& s : p->program.seed) reserved += static_cast<std::int64_t>(s.size);
  for (const auto& e : snap->snap().devices[p->device_index].events) {
    using traces::Action;
    if (e.action == Action::kSegmentAlloc || e.action == Action::kSegmentMap)
      reserved += static_cast<std::int64_t>(e.size);
    if (e.action == Action::kSegmentFree || e.action == Action::kSegmentUnmap)
      reserved -= static_cast<std::int64_t>(e.size);
    if (e.action == Action::kOom) f.oom = true;
  }
  f.final_reserved = reserved;
  return f;
}

void expectEveryEntryPointAgrees(const Case& c) {
  const Figures lib = viaLibrary(c);
  ASSERT_GT(lib.peak_reserved, 0);

  const Figures cli = viaWhatIfCommand(c);
  EXPECT_EQ(cli.peak_reserved, lib.peak_reserved);
  EXPECT_EQ(cli.oom, lib.oom);
  EXPECT_EQ(cli.final_reserved, lib.final_reserved);
  EXPECT_EQ(cli.probe, lib.probe);

  const Figures gui = viaSession(c);
  EXPECT_EQ(gui.peak_reserved, lib.peak_reserved);
  EXPECT_EQ(gui.oom, lib.oom);
  EXPECT_EQ(gui.final_reserved, lib.final_reserved);
  EXPECT_EQ(gui.probe, lib.probe);

  const auto [gate_peak, gate_oom] = viaGate(c, lib.oom);
  EXPECT_EQ(gate_peak, lib.peak_reserved);
  EXPECT_EQ(gate_oom, lib.oom);

  EXPECT_EQ(viaSweep(c), std::optional(lib.peak_reserved));

  const Figures exported = viaExport(c);
  EXPECT_EQ(exported.peak_reserved, lib.peak_reserved);
  EXPECT_EQ(exported.oom, lib.oom);
  EXPECT_EQ(exported.final_reserved, lib.final_reserved);
}

TEST(EditedRun, TheCommandLineNamesTheFlagOfABadEdit) {
  const auto trace = (test::samplesDir() / "resume-tiny" / "resume-main.rank0.pickle").string();
  auto r = test::runReservoir({"whatif", trace, "--demand", "lots@event:1"});
  EXPECT_EQ(r.code, 2) << r.err;  // a bad flag value is a usage error
  EXPECT_NE(r.err.find("--demand: 'lots@event:1'"), std::string::npos) << r.err;
  r = test::runReservoir({"gate", trace, "--max-peak-reserved", "1GiB", "--set", "no_such_setting:1"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--set 'no_such_setting:1'"), std::string::npos) << r.err;
}

TEST(EditedRun, HelpSaysWhichDeviceAFlagDescribes) {
  for (const char* cmd : {"whatif", "gate", "export", "sweep"}) {
    const auto r = test::runReservoir({cmd, "--help"});
    EXPECT_NE(r.out.find("the edited run's memory fraction"), std::string::npos) << cmd;
    EXPECT_NE(r.out.find("the edited run's device memory"), std::string::npos) << cmd;
  }
  const auto r = test::runReservoir({"check", "--help"});
  EXPECT_NE(r.out.find("the recorded device's memory fraction"), std::string::npos);
  EXPECT_NE(r.out.find("the recorded device's total memory"), std::string::npos);
}

TEST(EditedRun, EveryEntryPointGivesTheSameFiguresWithAllFourDeviceFlags) {
  // Capacity 600 MiB minus 100 MiB overhead, a fraction of that capacity (the trace's
  // capture JSON says the device has 140 GiB: the fraction must apply to the given
  // capacity everywhere), and expandable segments: the edited run runs out of memory.
  Case c;
  c.trace = (test::samplesDir() / "resume-tiny" / "resume-main.rank0.pickle").string();
  c.cleanup = "after:state_dict_loader.py:load";
  c.probe = "after:state_dict_loader.py:load";
  c.device_flags = {"--capacity", "600MiB", "--overhead", "100MiB",
                    "--fraction", "0.7",    "--set",      "expandable_segments:True"};
  c.device.capacity = 600ull << 20;
  c.device.overhead = 100ull << 20;
  c.device.fraction = 0.7;
  c.device.settings = *sim::parseAllocConf("expandable_segments:True");
  const Figures lib = viaLibrary(c);
  EXPECT_TRUE(lib.oom);
  // Without the cleanup and the device flags the trace peaks at 510 MiB (recorded).
  EXPECT_LT(lib.peak_reserved, 534773760);
  expectEveryEntryPointAgrees(c);
}

TEST(EditedRun, TheOverheadComesOffTheCapacityTheRecordedOomsImplyEverywhere) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  // roundup-s4 reached the GPU's real capacity (one recorded oom); 2 GiB more outside the
  // cache lowers the peak the edited run can reach.
  Case c;
  c.trace = test::sharedTrace("synth/roundup-s4.pickle").string();
  c.cleanup = "before:synth.py:main";
  c.device_flags = {"--overhead", "2GiB"};
  c.device.overhead = 2ull << 30;
  const Figures lib = viaLibrary(c);
  Case without = c;
  without.device_flags.clear();
  without.device.overhead = 0;
  EXPECT_LT(lib.peak_reserved, viaLibrary(without).peak_reserved);
  expectEveryEntryPointAgrees(c);
}

}  // namespace
}  // namespace reservoir::replay
