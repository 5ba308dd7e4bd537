#include "checked_output.h"

#include <cerrno>
#include <cstring>

#include "cli.h"

namespace reservoir::cli {

void CheckedOutput::failed() {
  if (failed_) return;
  failed_ = true;
  errno_ = errno;
}

CheckedOutput::int_type CheckedOutput::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  if (failed_) return traits_type::eof();
  errno = 0;
  if (traits_type::eq_int_type(to_->sputc(traits_type::to_char_type(c)), traits_type::eof())) {
    failed();
    return traits_type::eof();
  }
  return c;
}

std::streamsize CheckedOutput::xsputn(const char* s, std::streamsize n) {
  if (failed_) return 0;
  errno = 0;
  const std::streamsize put = to_->sputn(s, n);
  if (put != n) failed();
  return put;
}

int CheckedOutput::sync() {
  errno = 0;
  if (to_->pubsync() != 0) failed();
  return failed_ ? -1 : 0;
}

bool CheckedOutput::finish() { return sync() == 0; }

std::string CheckedOutput::reason() const {
  if (!failed_) return {};
  return errno_ != 0 ? std::strerror(errno_) : "the output stream took no more";
}

int finishOutput(CheckedOutput& out, std::ostream& err, int code) {
  if (out.finish()) return code;
  err << "reservoir: standard output: write failed: " << out.reason() << " (the command's output is lost)\n"
      << std::flush;
  return code == kOk || code == kFailed ? kInputError : code;
}

}  // namespace reservoir::cli
