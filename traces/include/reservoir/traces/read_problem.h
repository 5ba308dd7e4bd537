// What went wrong with an input, in plain words first. Every fatal reader error belongs to one
// of a few classes, chosen where the error is made; its headline is what a user reads first, and
// the byte-level detail (file, byte offset, what was expected) follows in parentheses:
//
//   the file ends early: was the dump interrupted? (file x.pickle, byte 123 of 123: truncated ...)
//
// docs/reader.md lists each class with its message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "reservoir/core/status.h"

namespace reservoir::traces {

enum class ReadProblem : std::uint8_t {
  kUnreadable,         // the file cannot be opened or read (no such file, a directory, an I/O error)
  kEmptyFile,          // 0 bytes
  kTextFile,           // starts with printable text (HTML, JSON, a log, a protocol-0 pickle)
  kWrongFileType,      // binary, but not a pickle of protocol 2-5, nor gzip / zstd (a zip, ...)
  kTruncated,          // the data ends before the pickle's STOP (or the compressed stream ends early)
  kCompressedDamaged,  // gzip / zstd data that does not decode, or whose checksum or length is wrong
  kCodeRefused,        // GLOBAL, REDUCE, BUILD, ...: the pickle would import or call code
  kTooLarge,           // past a ReadLimits limit or the memory budget
  kNotASnapshot,       // a good pickle of something else (a list, a dict without the snapshot's keys)
  kDamaged,            // a pickle that breaks its own structure, or a snapshot field of the wrong kind
  kCancelled,          // stopped by the caller
};

// The class's plain words ("the file ends early: was the dump interrupted?").
std::string_view headlineOf(ReadProblem problem);

// The class's headline with what the site knows in plain words: "not a PyTorch memory snapshot"
// + "the file starts with text (\"<html>\")" -> "not a PyTorch memory snapshot: the file starts
// with text (\"<html>\")"; for kCodeRefused it names the callee: "this pickle would run code
// (os.system); ...".
std::string headline(ReadProblem problem, std::string_view specific = {});

// A fatal reader error of `problem`: `detail` is the byte-level part (what was expected).
Status readError(ReadProblem problem, std::string detail, std::string_view specific = {});

// The one message every front end shows: "HEADLINE (file F, byte N: DETAIL)". A status
// without a headline is taken as kDamaged. `byte` is the offset in the pickle stream;
// `decompressed` says it counts decompressed bytes; `of` (a plain file's size) is shown for a
// truncation ("byte 120 of 120"). The returned Status carries the headline, file and offset.
struct ReadPlace {
  std::string file;
  std::optional<std::uint64_t> byte;
  bool decompressed = false;
  std::optional<std::uint64_t> of;
};
Status formatReadError(const Status& error, const ReadPlace& place);

}  // namespace reservoir::traces
