// Scaling a trace: from captures of one program at a few sizes (world size, sequence length,
// batch, ...) to the trace of the same program at another size, replayed through the exact
// model. The inputs' request streams are aligned (same program, same order), each request's
// size is fitted as a law of the parameters (constant, affine in tokens = seq x batch, an FSDP2
// shard c + K/world, a quadratic where three inputs show one), the laws are evaluated at the
// target and the target is synthesized as an ordinary snapshot (streams, record_stream frees,
// annotations and stacks kept) by recording the scaled requests through the model. whatif,
// sweep, export and the GUI work on it like on any capture (docs/scale.md).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reservoir/core/status.h"
#include "reservoir/replay/conformance.h"
#include "reservoir/replay/whatif.h"
#include "reservoir/traces/snapshot.h"

namespace reservoir::replay::scale {

// Parameter name -> value ("world" -> 64, "seq" -> 16384, "batch" -> 2). Any name works; world,
// seq and batch have meaning to the laws (tokens = seq x batch; shards divide by world).
using Params = std::map<std::string, std::int64_t>;

// The most targets one grid may have (a grid is refused before any target is made), and the most
// ranks a world may have.
inline constexpr std::size_t kMaxTargets = 100000;
inline constexpr std::int64_t kMaxWorld = std::int64_t{1} << 24;
// The largest request a prediction may make: 1 TiB, more memory than any GPU has. A law that
// predicts more at the target is refused in plain words, never wrapped around.
inline constexpr std::int64_t kMaxRequestBytes = std::int64_t{1} << 40;

// One rule for every parameter, wherever it comes from (--to, --from, a sidecar): world, seq
// and batch are at least 1, world at most kMaxWorld. Usage errors (exit 2).
Status checkParamValue(std::string_view name, std::int64_t value);
Status checkParams(const Params& params);

// "world=2,seq=4096" (every value one integer).
Expected<Params> parseParams(std::string_view text);
// "world=8,16,32,seq=4096,8192": the grid of every combination (a value list per name), in
// order (the first name varies slowest).
Expected<std::vector<Params>> parseGrid(std::string_view text);
std::string paramsText(const Params& params);  // "seq=4096,world=2"

// The parameters a capture's sidecar records (X.json beside X.pickle, written by the capture
// kit): world (world_size) and every integer of its "config" (seq, batch, dim, layers, ...).
Expected<Params> paramsFromCaptureJson(const std::string& trace_path);

// One capture of the program at known parameters.
struct Input {
  std::shared_ptr<const traces::Snapshot> snapshot;
  std::size_t device_index = 0;
  ReplayEnvironment env;
  Params params;
  std::string name;  // for messages (the file)
};

// How a request's size follows the parameters. x is the law's variable (tokens, world, or
// another parameter's value); sizes are in bytes.
enum class LawKind : std::uint8_t {
  kConstant,     // c
  kAffine,       // c + slope * x (slope a fraction)
  kShard,        // c + K / world: an FSDP2 shard (dim 0 padded to a multiple of world: exact while world divides it)
  kQuadratic,    // a + b x + c x^2, only where three inputs or more show it
  kUnexplained,  // no law fits every input: the template's size is kept
  kTerms,        // several parameters at once: a sum of terms (LawTerm) with exact rational coefficients
};
std::string_view lawKindName(LawKind kind);

// One term of a law in several parameters: a monomial tokens^a seq^b batch^c world^d (d may be
// -1: a share of world), or FSDP2's padded shard of a dim 0 (torch's _fsdp_param.py pads dim 0 to
// a multiple of world: a rank holds ceil(dim0 / world) rows, the all-gather output world times that).
struct LawTerm {
  enum class Kind : std::uint8_t { kMonomial, kShard, kGathered };
  Kind kind = Kind::kMonomial;
  std::int8_t tokens = 0, seq = 0, batch = 0, world = 0;  // exponents (kMonomial)
  std::int64_t dim0 = 0;                                  // kShard: ceil(dim0/world); kGathered: world*ceil(dim0/world)
  [[nodiscard]] std::string name() const;                 // "tokens/world", "ceil(1024/world)", "1"
  friend bool operator==(const LawTerm&, const LawTerm&) = default;
};

// An exact fraction (a coefficient of a kTerms law).
struct Ratio {
  std::int64_t num = 0, den = 1;
  friend bool operator==(const Ratio&, const Ratio&) = default;
};

struct Law {
  LawKind kind = LawKind::kConstant;
  std::string variable;  // "tokens", "world", "seq", ...; empty for constants
  // The (x, size) points the law goes through (1 for a constant, 2 for affine and shard laws,
  // 3 for a quadratic); it is evaluated exactly from them (Lagrange form, integer arithmetic).
  std::vector<std::pair<std::int64_t, std::int64_t>> basis;
  // The size at `params` (x taken from them); `exact` is cleared when the value is not a whole
  // number of bytes (a shard past the inputs' divisibility is rounded up, as padding does).
  // kTerms: size = sum of coefs[i] * terms[i] at the parameters.
  std::vector<LawTerm> terms;
  std::vector<Ratio> coefs;
  // False where the inputs cannot tell the size at the target: two laws as simple as this one go
  // through every input and differ there, or none is simpler than the inputs are many. The size
  // is then the simplest law's guess, the prediction is not exact, and `add_capture` names a
  // capture (parameters) that would settle it.
  bool determined = true;
  std::string why_undetermined;
  std::optional<Params> add_capture;
  // `exact` is also cleared where the value is out of range (an overflow or more than
  // kMaxRequestBytes: then kMaxRequestBytes + 1 is returned, never a wrapped-around size).
  [[nodiscard]] std::int64_t evaluate(const Params& params, bool* exact = nullptr) const;
  [[nodiscard]] std::string describe() const;   // "affine(tokens): 8192 + 4096*tokens"
  [[nodiscard]] std::string className() const;  // "affine(tokens)"
};

// The law's variable's value at `params` ("tokens" = seq x batch, seq alone without a batch).
std::optional<std::int64_t> variableValue(const Params& params, std::string_view variable);

// One request of the template (the input the target is synthesized from) with its matches.
struct RequestFit {
  std::uint32_t op = 0;             // the template's malloc op
  std::vector<std::int64_t> sizes;  // per input; -1 where the input has no matching request
  Law law;
  std::int64_t predicted = 0;
  StackId stack;  // in the template's snapshot
};

struct ScaleModel {
  Params target;                   // completed (completeTarget)
  std::size_t template_input = 0;  // the input nearest the target: the program synthesized
  std::vector<RequestFit> requests;
  std::size_t matched_everywhere = 0;            // template requests every input has
  std::vector<std::size_t> unmatched_per_input;  // requests of input i the template lacks
  std::map<std::string, std::size_t> laws;       // "constant", "affine(tokens)", "shard(world)", ... -> count
  std::size_t inexact = 0;                       // laws whose value at the target is not a whole byte count
  std::size_t undetermined = 0;                  // requests the inputs cannot tell at the target (Law::determined)
  std::vector<std::string> notes;
};

struct ScaleOptions {
  std::size_t max_edit_distance = 20000;  // alignment gives up past this many inserted/removed requests
};

// The target's parameters: `target` completed with the inputs' common value of every parameter it
// does not name (an error where the inputs differ); names no input has are an error.
Expected<Params> completeTarget(const std::vector<Input>& inputs, const Params& target);

// The target's trace: the template's program with the predicted sizes, recorded through the
// model with the template's settings on a device large enough (driver addresses), as a
// snapshot whose events, stacks, times and annotations follow the template.
struct ScaledTrace {
  std::shared_ptr<const traces::Snapshot> snapshot;
  ReplayEnvironment env;  // the template's device (total memory, fraction), no capture facts
  std::size_t device_index = 0;
};

// Predicted against measured request sizes, the misses grouped by request class (the
// allocation's innermost frames and the law).
struct MissClass {
  std::string where;  // innermost frames of the allocation stack
  std::string law;    // the law's class
  std::size_t count = 0;
  std::int64_t bytes = 0;  // sum of predicted - measured
  std::int64_t example_predicted = 0, example_measured = 0;
};
struct Comparison {
  std::size_t compared = 0, equal = 0;
  std::size_t only_predicted = 0;  // template requests the measured trace does not have
  std::size_t only_measured = 0;   // measured requests the template does not have
  std::vector<MissClass> misses;   // largest |bytes| first
};

// The inputs, each prepared once (its requests through the model), for any number of targets.
class Scaler {
 public:
  static Expected<Scaler> create(std::vector<Input> inputs, const ScaleOptions& options = {});
  // Aligns the inputs' requests to the input nearest `target`, fits every request's law and
  // evaluates it at `target` (completed with completeTarget).
  [[nodiscard]] Expected<ScaleModel> fit(const Params& target) const;
  [[nodiscard]] Expected<ScaledTrace> synthesize(const ScaleModel& model) const;
  // The model's request sizes against a capture of the target (`measured`), request by request
  // (aligned like the inputs): what a miss in the peaks comes from.
  [[nodiscard]] Expected<Comparison> compare(const ScaleModel& model, const Input& measured) const;
  [[nodiscard]] const std::vector<Input>& inputs() const { return inputs_; }
  // The request keys (allocation stack and stream class) of input i, one per malloc op.
  [[nodiscard]] const std::vector<std::uint64_t>& keys(std::size_t i) const { return keys_[i]; }

 private:
  [[nodiscard]] std::string programNote(std::size_t i, std::size_t t, const std::vector<std::int64_t>& match,
                                        std::size_t matched) const;
  std::vector<Input> inputs_;
  std::vector<std::shared_ptr<const PreparedTrace>> prepared_;
  std::vector<std::vector<std::uint64_t>> keys_;
  std::vector<std::vector<std::uint32_t>> malloc_ops_;  // per input: its malloc ops, in order
  std::vector<std::vector<std::int64_t>> sizes_;        // per input: their sizes
  ScaleOptions options_;
};

// Scaler::create + fit + synthesize, for one target.
Expected<ScaledTrace> scaleTrace(const std::vector<Input>& inputs, const Params& target,
                                 ScaleModel* model_out = nullptr, const ScaleOptions& options = {});

// Alignment of two request-key sequences (Myers' O(ND) diff): for each element of `a`, the
// index of its match in `b`, or -1. Fails past `max_distance` insertions and deletions.
Expected<std::vector<std::int64_t>> alignSequences(const std::vector<std::uint64_t>& a,
                                                   const std::vector<std::uint64_t>& b, std::size_t max_distance);

}  // namespace reservoir::replay::scale
