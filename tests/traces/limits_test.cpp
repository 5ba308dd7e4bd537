// Pathological nesting: the pickle machine is iterative, so a million nested containers
// neither recurse nor take memory out of proportion; they are rejected quickly.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <string>
#include <vector>

#include "reservoir/traces/reader.h"
#include "reservoir/traces/stack_interner.h"
#include "reservoir/traces/writer.h"

namespace reservoir::traces {
namespace {

constexpr std::size_t kDepth = 1'000'000;

std::vector<std::uint8_t> pickleOf(const std::string& body) {
  const std::string text = "\x80\x04" + body + ".";  // PROTO 4, body, STOP
  return std::vector<std::uint8_t>(text.begin(), text.end());
}

long peakRssMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

void expectRejectedQuickly(const std::vector<std::uint8_t>& bytes, const std::string& reason) {
  const auto start = std::chrono::steady_clock::now();
  auto snap = readSnapshotBytes(bytes, "nested");
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(snap.ok());
  EXPECT_NE(snap.message().find(reason), std::string::npos) << snap.message();
  EXPECT_LT(seconds, 20.0);
  // A few hundred bytes per open container at most (the input is about 2 MB).
  EXPECT_LT(peakRssMiB(), 1024) << "peak RSS in MiB";
}

// [[[[...]]]]: a million EMPTY_LISTs, then a million APPENDs folding them into each other.
TEST(Limits, MillionNestedLists) {
  expectRejectedQuickly(pickleOf(std::string(kDepth, ']') + std::string(kDepth - 1, 'a')),
                        "the pickled object is list");
}

// {k: {k: {...}}}: EMPTY_DICT and a key per level, then SETITEMs.
TEST(Limits, MillionNestedDicts) {
  std::string body;
  for (std::size_t i = 0; i < kDepth; ++i) body += "}N";
  body.resize(body.size() - 1);  // the innermost dict has no key
  body += std::string(kDepth - 1, 's');
  expectRejectedQuickly(pickleOf(body), "has no 'segments' / 'device_traces' key");
}

// ((((),),),): an empty tuple wrapped a million times by TUPLE1.
TEST(Limits, MillionNestedTuples) {
  std::string body = ")";
  for (std::size_t i = 0; i < kDepth; ++i) body += "\x85";  // TUPLE1 wraps the top
  expectRejectedQuickly(pickleOf(body), "the pickled object is tuple");
}

TEST(Limits, MillionMarksThenStop) {
  expectRejectedQuickly(pickleOf(std::string(kDepth, '(')), "STOP with an empty stack");
}

// Entries with more distinct extras (here user_metadata strings) than the limit: refused in plain
// words rather than kept under ids that no longer fit; up to the limit they read back whole.
TEST(Limits, DistinctEntryExtrasBeyondTheLimitAreRefused) {
  Snapshot s;
  StackInterner interner(&s);
  const StackId empty = interner.emptyStack();
  DeviceTrace d;
  for (int i = 0; i < 5; ++i) {
    TraceEvent e;
    e.action = Action::kAlloc;
    e.addr = 4096u * static_cast<unsigned>(i + 1);
    e.size = 512;
    e.stack = empty;
    s.editExtra(e, [&](EventExtra& x) {
      x.has_frames = true;
      x.user_metadata = s.strings.intern("step " + std::to_string(i));
    });
    d.events.push_back(e);
  }
  s.devices.push_back(std::move(d));
  const auto bytes = writeSnapshotBytes(s);
  ASSERT_TRUE(bytes) << bytes.message();
  ReadOptions o;
  o.limits.max_event_extras = 5;
  const auto whole = readSnapshotBytes(*bytes, "extras", o);
  ASSERT_TRUE(whole) << whole.message();
  ASSERT_EQ(whole->devices.at(0).events.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    const TraceEvent& e = whole->devices[0].events[static_cast<std::size_t>(i)];
    EXPECT_EQ(whole->strings.view(whole->extra(e).user_metadata), "step " + std::to_string(i));
    EXPECT_EQ(e.action, Action::kAlloc);
  }
  o.limits.max_event_extras = 4;
  const auto refused = readSnapshotBytes(*bytes, "extras", o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("more than 4 distinct combinations of an entry's stream, pool_id"),
            std::string::npos)
      << refused.message();
}

// An entry's stream is kept with its other rarely varying fields: entries on two streams in turn
// read back with their own streams and two combinations, and distinct streams count to the limit.
TEST(Limits, EntriesKeepTheirStreamsAndDistinctStreamsCountToTheLimit) {
  Snapshot s;
  StackInterner interner(&s);
  const StackId empty = interner.emptyStack();
  DeviceTrace d;
  const StreamValue streams[] = {0, 7, 0, 7, 7, 0, (1ull << 63) + 5, 12};
  for (std::size_t i = 0; i < std::size(streams); ++i) {
    TraceEvent e;
    e.action = Action::kAlloc;
    e.addr = 4096u * (i + 1);
    e.size = 512;
    e.stack = empty;
    s.editExtra(e, [](EventExtra& x) { x.has_frames = true; });
    s.setStream(e, streams[i]);
    d.events.push_back(e);
  }
  s.devices.push_back(std::move(d));
  const auto bytes = writeSnapshotBytes(s);
  ASSERT_TRUE(bytes) << bytes.message();
  ReadOptions o;
  const auto read = readSnapshotBytes(*bytes, "streams", o);
  ASSERT_TRUE(read) << read.message();
  for (std::size_t i = 0; i < std::size(streams); ++i) {
    const TraceEvent& e = read->devices.at(0).events.at(i);
    EXPECT_EQ(read->stream(e), streams[i]) << "entry " << i;
    EXPECT_TRUE(read->extra(e).has_frames) << "entry " << i;
  }
  // Equal fields, one id: the entries on streams 0 and 7 share two ids between them.
  const auto& ev = read->devices[0].events;
  EXPECT_EQ(ev[0].extraId(), ev[2].extraId());
  EXPECT_EQ(ev[1].extraId(), ev[3].extraId());
  EXPECT_NE(ev[0].extraId(), ev[1].extraId());
  EXPECT_EQ(read->extras.size(), 5u);  // none, and one per stream used
  o.limits.max_event_extras = 3;
  const auto refused = readSnapshotBytes(*bytes, "streams", o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("more than 3 distinct combinations of an entry's stream"), std::string::npos)
      << refused.message();
}

}  // namespace
}  // namespace reservoir::traces
