#include "reservoir/traces/read_problem.h"

#include <fmt/format.h>

namespace reservoir::traces {
namespace {

struct Words {
  std::string_view base;
  std::string_view default_specific;  // said after the base when the site knows nothing more
};

Words wordsOf(ReadProblem problem) {
  switch (problem) {
    case ReadProblem::kUnreadable: return {"cannot read the file", ""};
    case ReadProblem::kEmptyFile: return {"the file is empty: was the dump interrupted before it wrote anything?", ""};
    case ReadProblem::kTextFile: return {"not a PyTorch memory snapshot", "the file starts with text"};
    case ReadProblem::kWrongFileType: return {"not a PyTorch memory snapshot", "the file is not a pickle"};
    case ReadProblem::kTruncated: return {"the file ends early: was the dump interrupted?", ""};
    case ReadProblem::kCompressedDamaged: return {"the compressed file is damaged", ""};
    case ReadProblem::kCodeRefused: return {"this pickle would run code; a memory snapshot never does: refused", ""};
    case ReadProblem::kTooLarge:
      return {"too large to read: the file asks for more memory than a real snapshot needs (hostile or damaged?)", ""};
    case ReadProblem::kNotASnapshot: return {"not a PyTorch memory snapshot", "a pickle of something else"};
    case ReadProblem::kDamaged: return {"the snapshot is damaged", ""};
    case ReadProblem::kCancelled: return {"cancelled", ""};
  }
  return {"the snapshot is damaged", ""};
}

}  // namespace

std::string_view headlineOf(ReadProblem problem) { return wordsOf(problem).base; }

std::string headline(ReadProblem problem, std::string_view specific) {
  const Words w = wordsOf(problem);
  if (problem == ReadProblem::kCodeRefused) {
    if (specific.empty()) return std::string(w.base);
    return fmt::format("this pickle would run code ({}); a memory snapshot never does: refused", specific);
  }
  if (specific.empty()) specific = w.default_specific;
  if (specific.empty()) return std::string(w.base);
  return fmt::format("{}: {}", w.base, specific);
}

Status readError(ReadProblem problem, std::string detail, std::string_view specific) {
  return Status::error(std::move(detail)).withHeadline(headline(problem, specific));
}

Status formatReadError(const Status& error, const ReadPlace& place) {
  const std::string words = error.headline().empty() ? headline(ReadProblem::kDamaged) : error.headline();
  std::string where = "file " + place.file;
  if (place.byte) {
    where += fmt::format(", byte {}", *place.byte);
    if (place.decompressed)
      where += " of the decompressed stream";
    else if (place.of)
      where += fmt::format(" of {}", *place.of);
  } else if (place.decompressed) {
    where += ", decompressed stream";
  }
  const std::string& detail = error.message();
  std::string text =
      detail.empty() ? fmt::format("{} ({})", words, where) : fmt::format("{} ({}: {})", words, where, detail);
  Status out = error.isUsage() ? Status::usage(std::move(text)) : Status::error(std::move(text));
  return out.withHeadline(words).at(place.file, place.byte);
}

}  // namespace reservoir::traces
