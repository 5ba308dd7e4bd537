// The option texts every front end parses (replay/option_text.h): the command line names an
// option "--capacity", the Python package "capacity"; the rules are the same.
#include "reservoir/replay/option_text.h"

#include <algorithm>

#include "reservoir/replay/device_presets.h"

#include <gtest/gtest.h>

#include "reservoir/replay/gate.h"
#include "reservoir/replay/trace.h"
#include "reservoir/simulator/sizes.h"
#include "test_paths.h"

namespace reservoir::replay {
namespace {

// A front end's wording, as the command line's: every input a flag.
std::string dashes(Input input) {
  std::string name(inputName(input));
  for (char& c : name)
    if (c == '_') c = '-';
  return "--" + name;
}
std::string dashesWithValue(Input input, std::string_view value) { return dashes(input) + " " + std::string(value); }
std::string command(Command) { return "'reservoir check'"; }
const Wording kDashes{&dashes, &dashes, &dashesWithValue, &command};

TEST(OptionText, EditedRunSizesSettingsAndFraction) {
  auto o = parseEditedRunOptions({"expandable_segments:True", "80GiB", "512MiB", 0.5});
  ASSERT_TRUE(o.ok()) << o.message();
  EXPECT_EQ(o->capacity, ByteCount{80} << 30);
  EXPECT_EQ(o->overhead, ByteCount{512} << 20);
  ASSERT_TRUE(o->settings.has_value());
  EXPECT_TRUE(o->settings->expandable_segments);
  EXPECT_EQ(o->fraction, 0.5);
  auto none = parseEditedRunOptions({});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->capacity || none->settings || none->fraction);
  EXPECT_EQ(none->overhead, 0u);
}

// --set / set= is read as torch reads PYTORCH_CUDA_ALLOC_CONF: the whole of it, so "" is torch's
// defaults (it was once taken for "not given"), and a key left out is torch's default, not the
// recorded value; only leaving the option out keeps the recorded settings.
TEST(OptionText, SetAsTorchReadsIt) {
  const auto defaults = sim::parseAllocConf("");
  ASSERT_TRUE(defaults.ok());
  auto empty = parseEditedRunOptions({std::string(), "", "", std::nullopt});
  ASSERT_TRUE(empty.ok()) << empty.message();
  ASSERT_TRUE(empty->settings.has_value());
  EXPECT_EQ(empty->settings->toConfString(), defaults->toConfString());
  EXPECT_FALSE(parseEditedRunOptions({})->settings.has_value());

  // On a trace recorded with expandable segments: no --set keeps them, --set '' and a set
  // without the key do not.
  RESERVOIR_REQUIRE_SHARED_TRACES();
  auto trace = readTrace((test::sharedTracesDir() / "synth" / "expandable-s2.pickle").string());
  ASSERT_TRUE(trace.ok()) << trace.message();
  auto prepared = prepareTrace(trace->snapshot, 0, trace->environment());
  ASSERT_TRUE(prepared.ok()) << prepared.message();
  ASSERT_TRUE(prepared->recorded_config.expandable_segments);
  const auto config = [&](std::optional<std::string> set) {
    auto o = parseEditedRunOptions({std::move(set), "", "", std::nullopt});
    EXPECT_TRUE(o.ok()) << o.message();
    auto run = chooseEditedRun(*prepared, *o);
    EXPECT_TRUE(run.ok()) << run.message();
    return run->config;
  };
  EXPECT_TRUE(config(std::nullopt).expandable_segments);
  EXPECT_FALSE(config("").expandable_segments);
  EXPECT_EQ(config("").toConfString(), defaults->toConfString());
  const auto split = config("max_split_size_mb:128");
  EXPECT_FALSE(split.expandable_segments);
  EXPECT_EQ(split.max_split_size, sim::ByteCount{128} << 20);

  // The recorded device's settings (check/replay --settings) alike.
  auto env = replayEnvironment(*trace, {std::nullopt, "", std::string()});
  ASSERT_TRUE(env.ok()) << env.message();
  ASSERT_TRUE(env->settings.has_value());
  EXPECT_EQ(*env->settings, "");
  auto cfg = replayConfig(trace->snap(), *env);
  ASSERT_TRUE(cfg.ok()) << cfg.message();
  EXPECT_FALSE(cfg->expandable_segments);
  EXPECT_FALSE(replayEnvironment(*trace, {std::nullopt, "", std::nullopt})->settings.has_value());
}

TEST(OptionText, ErrorsNameTheOptionInTheFrontEndsWords) {
  EXPECT_EQ(parseEditedRunOptions({"", "lots", "", {}}, kDashes).message(),
            "--capacity: not a size: 'lots' (e.g. 141GiB, 80GB, 150109880320)");
  EXPECT_EQ(parseEditedRunOptions({"", "lots", "", {}}).message(),
            "capacity: not a size: 'lots' (e.g. 141GiB, 80GB, 150109880320)");
  EXPECT_NE(parseEditedRunOptions({"", "", "x", {}}).message().find("overhead: not a size: 'x'"), std::string::npos);
  EXPECT_EQ(parseEditedRunOptions({"", "", "", 1.5}).message(), "fraction: 1.5 is not in [0, 1]");
  EXPECT_EQ(parseEditedRunOptions({"no_such:1", "", "", {}}, kDashes).message().rfind("--set 'no_such:1': ", 0), 0u);
}

// "80GB" is 80 x 10^9 bytes (as Hugging Face Accelerate and GPU makers read it), "80GiB" 80 x 2^30;
// a bare "80G" could be either and is refused, saying so.
TEST(OptionText, SizesAreDecimalInGBBinaryInGiBAndABareLetterIsRefused) {
  auto o = parseEditedRunOptions({"", "80GB", "512MiB", {}});
  ASSERT_TRUE(o.ok()) << o.message();
  EXPECT_EQ(o->capacity, ByteCount{80'000'000'000});
  EXPECT_EQ(o->overhead, ByteCount{512} << 20);
  EXPECT_EQ(sim::parseSize("80GiB"), ByteCount{80} << 30);
  EXPECT_EQ(sim::parseSize("80 gib"), ByteCount{80} << 30);
  EXPECT_EQ(sim::parseSize("1.5GB"), ByteCount{1'500'000'000});
  EXPECT_EQ(sim::parseSize("20MB"), ByteCount{20'000'000});
  EXPECT_EQ(sim::parseSize("4kB"), ByteCount{4000});
  EXPECT_EQ(sim::parseSize("4KiB"), ByteCount{4096});
  EXPECT_EQ(sim::parseSize("2 TB"), ByteCount{2'000'000'000'000});
  EXPECT_EQ(sim::parseSize("2TiB"), ByteCount{2} << 40);
  EXPECT_EQ(sim::parseSize("100B"), ByteCount{100});
  EXPECT_EQ(sim::parseSize("150109880320"), ByteCount{150109880320});
  for (const char* bare : {"80G", "512m", "4K", "1T"}) EXPECT_EQ(sim::parseSize(bare), std::nullopt) << bare;
  EXPECT_EQ(sim::sizeError("80GB"), "");
  EXPECT_EQ(parseEditedRunOptions({"", "80G", "", {}}, kDashes).message(),
            "--capacity: '80G' is ambiguous: write 80GiB (80 x 2^30 bytes) or 80GB (80 x 10^9 bytes) "
            "(e.g. 141GiB, 80GB, 150109880320)");
  EXPECT_EQ(gateConditions("4k", WhatIfOptions{}).message(),
            "max_peak_reserved: '4k' is ambiguous: write 4KiB (4 x 2^10 bytes) or 4KB (4 x 10^3 bytes)");
}

TEST(OptionText, WhatIfEditsInKindOrderAndTheAddressModel) {
  WhatIfText t;
  t.probe = {"event:3"};
  t.cleanup = {"after:x.py:f", "event:5"};
  t.demand = {"4GiB@event:7"};
  t.address_model = "driver";
  auto w = parseWhatIfOptions(t);
  ASSERT_TRUE(w.ok()) << w.message();
  ASSERT_EQ(w->edits.size(), 4u);
  EXPECT_EQ(w->edits[0].kind, Edit::Kind::kCleanup);
  EXPECT_EQ(w->edits[1].text, "event:5");
  EXPECT_EQ(w->edits[2].kind, Edit::Kind::kProbe);
  EXPECT_EQ(w->edits[3].bytes, ByteCount{4} << 30);
  EXPECT_EQ(w->address_model, AddressModel::kDriver);
  t.address_model = "exact";
  EXPECT_EQ(parseWhatIfOptions(t).message(), "address_model: 'exact': expected 'anchored', 'recorded' or 'driver'");
  t.address_model = "recorded";
  t.release = {"x.py:f"};
  EXPECT_EQ(parseWhatIfOptions(t, kDashes).message().rfind("--release: 'x.py:f': expected SELECTOR@POINT", 0), 0u);
}

TEST(OptionText, GateConditionsTakeTheDemandsAndTheFraction) {
  WhatIfText t;
  t.demand = {"1GiB@event:1", "2GiB@event:2"};
  t.cleanup = {"event:3"};
  t.device.fraction = 0.25;
  auto w = parseWhatIfOptions(t);
  ASSERT_TRUE(w.ok());
  auto c = gateConditions("60GiB", *w);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->max_peak_reserved, ByteCount{60} << 30);
  ASSERT_EQ(c->demands.size(), 2u);
  EXPECT_EQ(c->demands[1].bytes, ByteCount{2} << 30);
  EXPECT_EQ(c->fraction, 0.25);
  EXPECT_EQ(gateConditions("", *w)->max_peak_reserved, std::nullopt);
  EXPECT_EQ(gateConditions("big", *w).message(), "max_peak_reserved: not a size: 'big'");
}

TEST(OptionText, RecordedDeviceResetPeaksAndInfoDevices) {
  auto trace = readTrace((test::samplesDir() / "resume-tiny" / "resume-main.rank0.pickle").string());
  ASSERT_TRUE(trace.ok()) << trace.message();
  auto env = replayEnvironment(*trace, {0.5, "40GiB", std::nullopt});
  ASSERT_TRUE(env.ok()) << env.message();
  EXPECT_EQ(env->fraction, 0.5);
  EXPECT_EQ(env->total_memory, ByteCount{40} << 30);
  EXPECT_EQ(env->capture, trace->capture);
  EXPECT_EQ(replayEnvironment(*trace, {{}, "", "bogus"}).message().rfind("settings: ", 0), 0u);

  auto resets = choosePeakResets(trace->snap(), 0, nullptr, {"event:10", "event:20"});
  ASSERT_TRUE(resets.ok()) << resets.message();
  std::vector<std::uint32_t> expected;  // every gap each point names, in order
  for (const char* text : {"event:10", "event:20"}) {
    const auto gaps = resolvePoint(*parsePoint(text), trace->snap(), 0);
    ASSERT_TRUE(gaps.ok()) << gaps.message();
    for (const Gap& g : *gaps) expected.push_back(g.boundary);
  }
  EXPECT_EQ(resets->boundaries, expected);
  EXPECT_EQ(resets->source, "given");
  EXPECT_TRUE(resets->note.empty());
  auto bad = choosePeakResets(trace->snap(), 0, nullptr, {"after:no_such_frame_anywhere"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("after:no_such_frame_anywhere"), std::string::npos) << bad.message();
  CaptureFacts facts;  // no points given: the capture's reset point
  facts.path = "x.json";
  facts.reset_peaks_after_event = 10;
  auto from_capture = choosePeakResets(trace->snap(), 0, &facts, {});
  ASSERT_TRUE(from_capture.ok()) << from_capture.message();
  EXPECT_EQ(from_capture->boundaries, std::vector<std::uint32_t>{expected[0]});
  EXPECT_EQ(from_capture->source, "x.json");
  EXPECT_NE(from_capture->note.find("x.json"), std::string::npos);

  auto all = summaryDevices(trace->snap(), std::nullopt);
  ASSERT_TRUE(all.ok());
  EXPECT_FALSE(all->empty());
  for (std::size_t d : *all)
    EXPECT_TRUE(!trace->snap().devices[d].events.empty() || d == trace->snap().busiestDevice());
  EXPECT_EQ(*summaryDevices(trace->snap(), 0), std::vector<std::size_t>{0});
  EXPECT_FALSE(summaryDevices(trace->snap(), 7).ok());
}

}  // namespace
}  // namespace reservoir::replay

namespace reservoir::replay {
namespace {

// A preset's capacity text is a capacity as every front end parses it, to the preset's bytes.
TEST(DevicePresets, EachTotalParsesAsTheCapacityItNames) {
  ASSERT_FALSE(devicePresets().empty());
  for (const auto& p : devicePresets()) {
    EditedRunText t;
    t.capacity = capacityText(p);
    auto o = parseEditedRunOptions(t);
    ASSERT_TRUE(o.ok()) << p.name << ": " << o.message();
    EXPECT_EQ(o->capacity, p.total) << p.name;
    EXPECT_FALSE(p.name.empty());
  }
  // The one total measured on the device with this project's tools: an H200's.
  const auto h200 = std::find_if(devicePresets().begin(), devicePresets().end(),
                                 [](const DevicePreset& p) { return p.name == "H200"; });
  ASSERT_NE(h200, devicePresets().end());
  EXPECT_EQ(h200->source, DevicePreset::Source::kMeasured);
}

}  // namespace
}  // namespace reservoir::replay
