// What an op no longer stores (a 32-byte op): its stack, read from the entries and the prepared
// allocation stacks, and its stream as a 16-bit entry of the program's table, with the refusal of
// a trace that names more streams than that.
#include <gtest/gtest.h>

#include "reservoir/replay/trace.h"
#include "reservoir/replay/whatif.h"
#include "reservoir/traces/reader.h"
#include "reservoir/traces/request_stream.h"
#include "test_paths.h"
#include "trace_cases.h"

namespace reservoir::replay {
namespace {

using traces::Action;

// The stack each op had when it kept one: a malloc's recorded entry's (its alloc event's, an
// oom's own), a free's allocation's (backward-pass entries: their forward frames). Found here
// through the request stream's events rather than by scanning the op's events.
StackId expectedStack(const PreparedTrace& p, const traces::RequestStream& req, const Op& op) {
  const auto& events = p.snapshot->devices[p.device_index].events;
  if (op.kind == OpKind::kEmptyCache) return StackId(0);
  if (op.kind == OpKind::kFree)
    return op.alloc.valid() ? req.allocations[op.alloc.value()].stack : events[op.first_event].stack;
  if (op.alloc.valid()) return events[req.allocations[op.alloc.value()].alloc_event].stack;
  return events[op.end_event - 1].stack;  // an oom entry ends its op in these traces
}

void expectOpStacks(const std::string& path, std::size_t* differing_from_allocation) {
  auto trace = readTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.message();
  const std::size_t dev = trace->snap().busiestDevice();
  auto prepared = prepareTrace(trace->snapshot, dev, ReplayEnvironment{});
  ASSERT_TRUE(prepared.ok()) << path << ": " << prepared.message();
  const auto req = traces::buildRequestStream(trace->snap().devices[dev], trace->snap().extras);
  for (const Op& op : prepared->program.ops) {
    ASSERT_EQ(prepared->opStack(op), expectedStack(*prepared, req, op)) << path << " op at event " << op.first_event;
    if (op.kind == OpKind::kMalloc && op.alloc.valid() &&
        prepared->opStack(op) != prepared->allocationStack(op.alloc.value()))
      ++*differing_from_allocation;
  }
}

TEST(OpStack, AMallocsIsItsEntrysAndAFreesItsAllocations) {
  std::size_t differing = 0;
  expectOpStacks((test::testDataDir() / "fields" / "forward-frames.pickle").string(), &differing);
  EXPECT_GT(differing, 0u) << "the backward-pass malloc's entry has no frames; its allocation has the forward ones";
  std::size_t traces = 0;
  for (const auto& c : test::collectTraces(test::testDataDir() / "traces")) {
    expectOpStacks(c.path.string(), &differing);
    ++traces;
  }
  EXPECT_GE(traces, 20u) << "the recorded traces of tests/data/traces";
}

TEST(OpStreams, TheTableHoldsSixtyFiveThousandStreamsAndCountsTheRest) {
  Program p;
  for (sim::StreamId s = 1; s < kMaxStreamEntries; ++s) ASSERT_EQ(internStream(p, s * 16), s);
  EXPECT_EQ(p.streams.size(), kMaxStreamEntries);
  EXPECT_EQ(internStream(p, 0), 0u);
  EXPECT_EQ(internStream(p, 16 * 5), 5u);
  EXPECT_EQ(internStream(p, 16 * 40000), 40000u) << "found again through the map";
  EXPECT_EQ(p.streams_refused, 0u);
  EXPECT_EQ(internStream(p, 7), 0u);
  EXPECT_EQ(p.streams_refused, 1u);
  EXPECT_EQ(p.streams.size(), kMaxStreamEntries);
}

// One 512-byte tensor on each of `streams` streams besides the default one (each a segment of
// its own, as the allocator makes per stream), allocated and freed, and its segment given back.
traces::Snapshot manyStreams(std::size_t streams) {
  traces::Snapshot s;
  traces::DeviceTrace d;
  auto ev = [&](Action a, Addr addr, ByteCount size, traces::StreamValue stream) {
    traces::TraceEvent e;
    e.action = a;
    e.addr = addr;
    e.size = size;
    s.setStream(e, stream);
    d.events.push_back(e);
  };
  constexpr ByteCount kSegment = 2u << 20;
  for (std::size_t k = 1; k <= streams; ++k) {
    const Addr at = 0x100000000ull + k * kSegment;
    const auto stream = static_cast<traces::StreamValue>(k * 16);
    ev(Action::kSegmentAlloc, at, kSegment, stream);
    ev(Action::kAlloc, at, 512, stream);
    ev(Action::kFreeRequested, at, 512, stream);
    ev(Action::kFreeCompleted, at, 512, stream);
    ev(Action::kSegmentFree, at, kSegment, stream);  // an empty_cache
  }
  s.devices.push_back(std::move(d));
  return s;
}

TEST(OpStreams, ATraceWithMoreStreamsThanAnOpNamesIsRefusedInPlainWords) {
  auto fits = prepareTrace(std::make_shared<const traces::Snapshot>(manyStreams(kMaxStreamEntries - 1)), 0,
                           ReplayEnvironment{});
  ASSERT_TRUE(fits.ok()) << fits.message();
  EXPECT_EQ(fits->program.streams.size(), kMaxStreamEntries);
  EXPECT_TRUE(fits->conformance.exact());
  auto over =
      prepareTrace(std::make_shared<const traces::Snapshot>(manyStreams(kMaxStreamEntries)), 0, ReplayEnvironment{});
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.message().find("too many streams to model"), std::string::npos) << over.message();
  EXPECT_NE(over.message().find("65535"), std::string::npos) << over.message();
}

}  // namespace
}  // namespace reservoir::replay
