// The display rule for a frame's file (frame_text.h): the last two parts behind an ellipsis.
#include <gtest/gtest.h>

#include "reservoir/replay/frame_text.h"

namespace reservoir::replay {
namespace {

TEST(ShortFramePath, KeepsTheLastTwoPartsOfALongPath) {
  EXPECT_EQ(shortFramePath("/home/u/.venv/lib/python3.12/site-packages/torch/optim/adam.py"),
            "\u2026/optim/adam.py");
  EXPECT_EQ(shortFramePath("a/b/c.py"), "\u2026/b/c.py");
}

TEST(ShortFramePath, ShortPathsStayWhole) {
  EXPECT_EQ(shortFramePath("train.py"), "train.py");
  EXPECT_EQ(shortFramePath("models/train.py"), "models/train.py");
  EXPECT_EQ(shortFramePath("/train.py"), "/train.py");
  EXPECT_EQ(shortFramePath(""), "");
}

}  // namespace
}  // namespace reservoir::replay
