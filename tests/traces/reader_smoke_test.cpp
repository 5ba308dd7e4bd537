#include <gtest/gtest.h>

#include "reservoir/traces/reader.h"
#include "test_paths.h"

namespace reservoir::traces {
namespace {

TEST(ReaderSmoke, ReadsTheCppWorkedExample) {
  auto snap = readSnapshotFile((test::samplesDir() / "worked-example.cpp-pickle2.pickle").string());
  ASSERT_TRUE(snap.ok()) << snap.message();
  EXPECT_EQ(snap->pickle_protocol, 2);
  ASSERT_EQ(snap->devices.size(), 1u);
  EXPECT_EQ(snap->devices[0].events.size(), 20u);
  EXPECT_EQ(snap->segments.size(), 3u);
}

}  // namespace
}  // namespace reservoir::traces
