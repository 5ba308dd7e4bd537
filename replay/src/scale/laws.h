// Fitting one request's size as a law of the parameters (scale.h's Law).
#pragma once

#include <string>
#include <vector>

#include "reservoir/replay/scale.h"

namespace reservoir::replay::scale::detail {

struct Point {
  const Params* params = nullptr;
  std::int64_t size = 0;
};

// The variables laws may use, in order of preference: tokens (seq x batch), world, then every
// other parameter the inputs have.
std::vector<std::string> lawVariables(const std::vector<Input>& inputs);

// The simplest law through every point: a constant; else, per variable in order, a shard law
// (world only), an affine law, a quadratic (three distinct values or more); else unexplained.
Law fitLaw(const std::vector<Point>& points, const std::vector<std::string>& variables);

}  // namespace reservoir::replay::scale::detail
