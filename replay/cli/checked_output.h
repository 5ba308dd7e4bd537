// The command's output (stdout) behind a stream buffer that passes everything on and keeps the
// first failure, so that a report lost to a full disk, /dev/full or a closed pipe is an error
// (exit != 0, "write failed: ..." on stderr) and never a silent success. runCli puts every
// command behind one (main's stdout, `python3 -m reservoir`, an MPI job's rank 0).
#pragma once

#include <ostream>
#include <streambuf>
#include <string>

namespace reservoir::cli {

class CheckedOutput : public std::streambuf {
 public:
  explicit CheckedOutput(std::streambuf* to) : to_(to) {}
  // Flushes what was written through to the device; false when anything was lost.
  bool finish();
  // The first failure's reason ("No space left on device"); empty when none.
  [[nodiscard]] std::string reason() const;

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  void failed();
  std::streambuf* to_;
  bool failed_ = false;
  int errno_ = 0;
};

// After a command: flushes `out` and, if any of its output was lost, says so on `err` and turns a
// success or a "no" into kInputError (the report the exit code stands for is gone); other codes stay.
int finishOutput(CheckedOutput& out, std::ostream& err, int code);

}  // namespace reservoir::cli
