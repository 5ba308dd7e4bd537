// Every fact MANIFEST.json records about a shared trace (what Python's pickle reads out of it)
// must come out of our reader exactly. One test per manifest entry, named after the file.
//
// Not checked here: `sha256` (a property of the file, not of reading it) and
// `torch_memory_stats_at_dump` (torch's own counters, which the simulator must reproduce).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <set>
#include <string>

#include "reservoir/traces/reader.h"
#include "test_paths.h"
#include "trace_corpus.h"

namespace reservoir::traces {
namespace {

using Json = nlohmann::json;

const std::set<std::string> kChecked = {"pickle_protocol",
                                        "events_per_device",
                                        "actions",
                                        "segments",
                                        "blocks",
                                        "block_states",
                                        "distinct_frames",
                                        "events_with_frames",
                                        "expandable_segments",
                                        "external_annotations",
                                        "final_reserved_bytes",
                                        "final_allocated_bytes",
                                        "final_active_bytes",
                                        "final_requested_bytes",
                                        "allocator_conf",
                                        "bytes"};
const std::set<std::string> kNotReaderFacts = {"sha256", "torch_memory_stats_at_dump"};

Json manifestEntry(const std::string& label) {
  std::ifstream in(test::sharedTracesDir() / "MANIFEST.json");
  return Json::parse(in).at(label);
}

// What the manifest counts, computed from our model.
struct Facts {
  std::vector<std::uint64_t> events_per_device;
  std::map<std::string, std::uint64_t> actions, block_states;
  std::uint64_t events_with_frames = 0, expandable = 0;
  std::uint64_t reserved = 0, allocated = 0, active = 0, requested = 0;
};

Facts factsOf(const Snapshot& s) {
  Facts f;
  for (const DeviceTrace& d : s.devices) {
    f.events_per_device.push_back(d.events.size());
    for (const TraceEvent& e : d.events) {
      ++f.actions[std::string(actionName(e.action))];
      if (!s.stack(e.stack).empty()) ++f.events_with_frames;
    }
  }
  for (const BlockInfo& b : s.blocks) ++f.block_states[std::string(blockStateName(b.state))];
  for (const SegmentInfo& seg : s.segments) {
    f.expandable += seg.is_expandable ? 1 : 0;
    f.reserved += seg.total_size;
    f.allocated += seg.allocated_size;
    f.active += seg.active_size;
    f.requested += seg.requested_size;
  }
  return f;
}

class ManifestTest : public ::testing::TestWithParam<test::TraceFile> {};

TEST_P(ManifestTest, ReaderReproducesEveryFact) {
  RESERVOIR_REQUIRE_SHARED_TRACES();
  const test::TraceFile& file = GetParam();
  const Json m = manifestEntry(file.label);
  for (const auto& [key, value] : m.items())
    EXPECT_TRUE(kChecked.count(key) || kNotReaderFacts.count(key)) << "manifest key '" << key << "' is not checked";

  auto snap = readSnapshotFile(file.path.string());
  ASSERT_TRUE(snap.ok()) << snap.message();
  const Facts f = factsOf(*snap);
  EXPECT_EQ(snap->pickle_protocol, m.at("pickle_protocol").get<int>());
  EXPECT_EQ(snap->file_bytes, m.at("bytes").get<std::uint64_t>());
  EXPECT_EQ(f.events_per_device, m.at("events_per_device").get<std::vector<std::uint64_t>>());
  EXPECT_EQ(f.actions, (m.at("actions").get<std::map<std::string, std::uint64_t>>()));
  EXPECT_EQ(snap->segments.size(), m.at("segments").get<std::size_t>());
  EXPECT_EQ(snap->blocks.size(), m.at("blocks").get<std::size_t>());
  EXPECT_EQ(f.block_states, (m.at("block_states").get<std::map<std::string, std::uint64_t>>()));
  EXPECT_EQ(snap->frames.size(), m.at("distinct_frames").get<std::size_t>());
  EXPECT_EQ(f.events_with_frames, m.at("events_with_frames").get<std::uint64_t>());
  EXPECT_EQ(f.expandable, m.at("expandable_segments").get<std::uint64_t>());
  EXPECT_EQ(snap->annotations.size(), m.at("external_annotations").get<std::size_t>());
  EXPECT_EQ(f.reserved, m.at("final_reserved_bytes").get<std::uint64_t>());
  EXPECT_EQ(f.allocated, m.at("final_allocated_bytes").get<std::uint64_t>());
  EXPECT_EQ(f.active, m.at("final_active_bytes").get<std::uint64_t>());
  EXPECT_EQ(f.requested, m.at("final_requested_bytes").get<std::uint64_t>());
  EXPECT_EQ(snap->settings.alloc_conf, m.at("allocator_conf").get<std::string>());
}

std::vector<test::TraceFile> manifestFiles() {
  auto files = test::sharedTraceFiles();
  // Without the shared folder, one placeholder test reports the skip.
  if (files.empty()) files.push_back({"shared_traces_absent", {}});
  return files;
}

INSTANTIATE_TEST_SUITE_P(Shared, ManifestTest, ::testing::ValuesIn(manifestFiles()),
                         [](const auto& param_info) { return test::testNameOf(param_info.param.label); });

}  // namespace
}  // namespace reservoir::traces
