// Field-by-field comparison of two Snapshot models whose string / frame / stack ids may differ:
// ids are compared through what they name.
#pragma once

#include <gtest/gtest.h>

#include "reservoir/traces/snapshot.h"

namespace reservoir::test {

// Everything the model holds except how it was stored (protocol, compression, byte counts).
// The failure message names the first difference.
::testing::AssertionResult sameModel(const traces::Snapshot& expected, const traces::Snapshot& actual);

}  // namespace reservoir::test
