// The pickle machine's refusals in plain words: a pickle that would run code (naming the callee
// where the pickle says it), and a first byte that is not PROTO (a text file, a zip, ...).
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "pickle_machine.h"
#include "pickle_opcodes.h"

namespace reservoir::traces::detail {
namespace {

constexpr std::size_t kShown = 40;  // characters of a callee or of a text file's start shown

bool isTextByte(std::uint8_t b) { return (b >= 0x20 && b < 0x7f) || b == '\n' || b == '\r' || b == '\t' || b >= 0x80; }

// `bytes` as one short line: newlines as \n, other control and non-ASCII bytes as '?', at most
// kShown characters.
std::string shown(std::string_view bytes) {
  std::string out;
  for (const char ch : bytes.substr(0, kShown)) {
    const auto b = static_cast<std::uint8_t>(ch);
    if (b == '\n')
      out += "\\n";
    else if (b == '"')
      out += "\\\"";
    else
      out += (b >= 0x20 && b < 0x7f) ? ch : '?';  // ASCII only: the message stays valid UTF-8
  }
  if (bytes.size() > kShown) out += "...";
  return out;
}

// GLOBAL / INST's argument "module\nname\n", as "module.name" (empty when it is not there).
std::string lineCallee(std::string_view rest) {
  const std::size_t a = rest.find('\n');
  if (a == std::string_view::npos) return {};
  const std::size_t b = rest.find('\n', a + 1);
  if (b == std::string_view::npos) return {};
  return shown(std::string(rest.substr(0, a)) + "." + std::string(rest.substr(a + 1, b - a - 1)));
}

}  // namespace

Status PickleMachine::refuseCode(std::uint8_t op) {
  std::string callee;
  if (op == kGlobal || op == kInst) {
    fill(std::min<std::size_t>(512, buf_.size()));
    callee = lineCallee(std::string_view(reinterpret_cast<const char*>(buf_.data() + pos_), end_ - pos_));
  } else if (op == kStackGlobal && stack_.size() >= 2 && stack_[stack_.size() - 2].isStr() && stack_.back().isStr()) {
    callee = shown(std::string(assembler_.text(stack_[stack_.size() - 2].strId())) + "." +
                   std::string(assembler_.text(stack_.back().strId())));
  }
  return fail(ReadProblem::kCodeRefused,
              fmt::format("refusing opcode {} (0x{:02x}){}: a memory snapshot holds only plain data, and this pickle "
                          "asks to import or call code, which Reservoir never does",
                          opcodeName(op), op, callee.empty() ? "" : " of " + callee),
              callee);
}

// The first bytes are not PROTO 2-5: say what the file looks like instead.
Status PickleMachine::badHeader() {
  const std::size_t n = std::min<std::size_t>(end_, 64);
  const std::string_view head(reinterpret_cast<const char*>(buf_.data()), n);
  const std::string detail = fmt::format(
      "first byte 0x{:02x}, expected a pickle's PROTO opcode (0x80) of protocol 2-5, or gzip/zstd magic", buf_[0]);
  const bool text = buf_[0] >= 0x20 && buf_[0] < 0x7f && std::all_of(head.begin(), head.end(), [](char c) {
                      return isTextByte(static_cast<std::uint8_t>(c));
                    });
  if (text) return fail(ReadProblem::kTextFile, detail, fmt::format("the file starts with text (\"{}\")", shown(head)));
  if (head.starts_with("PK\x03\x04"))
    return fail(ReadProblem::kWrongFileType, detail,
                "the file is a zip archive (what torch.save writes; a memory snapshot is a plain pickle)");
  return fail(ReadProblem::kWrongFileType, detail);
}

}  // namespace reservoir::traces::detail
