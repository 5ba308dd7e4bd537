// Fitting one request's size as a law of the parameters (scale.h's Law).
#pragma once

#include <string>
#include <vector>

#include "rational.h"
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

// --- laws in several parameters at once (terms.cpp)

// True when the points' parameters differ in world and in seq or batch (seq and batch alone are
// tokens, the one variable of today's laws).
bool severalParametersVary(const std::vector<Point>& points);

// The dims 0 FSDP2 pads, found in the requests themselves: a request whose size depends on world
// alone, that no c + K/world goes through but c + r * ceil(dim0 / world) does (each dim0 that
// does, found exactly from the padding at the inputs world does not divide).
std::vector<std::int64_t> paddedDims(const std::vector<Point>& points);

// The terms a law may use over these inputs: monomials of tokens, seq, batch, world (world^-1
// for shares), and for each padded dim 0 FSDP2's ceil(dim0/world) and world*ceil(dim0/world).
std::vector<LawTerm> lawTerms(const std::vector<Input>& inputs, const std::vector<std::int64_t>& dims);

// The value of a term at the parameters, exactly; none where a parameter is missing or it overflows.
std::optional<Q> termValue(const LawTerm& term, const Params& params);

// The simplest sum of terms through every point, solved exactly over the rationals (fewest terms,
// then fewest padded terms, then coefficients that are whole and not negative, as byte counts
// are). Determined when every law as simple gives the same size at `target` and fewer terms
// than points suffice; otherwise the law is marked undetermined with the capture that would tell.
// Unexplained when no law with fewer terms than points goes through them.
Law fitTerms(const std::vector<Point>& points, const std::vector<LawTerm>& terms, const Params& target,
             const std::vector<Input>& inputs);

}  // namespace reservoir::replay::scale::detail
