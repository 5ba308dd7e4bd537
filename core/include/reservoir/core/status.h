// Two tiers of errors (see docs/architecture.md): a Status / Expected<T> for fatal input
// problems, counted anomalies (anomalies.h) for per-event ones.
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace reservoir {

class Status {
 public:
  Status() = default;
  static Status error(std::string message) { return Status(std::move(message)); }
  // A request that does not fit the input (a point or selector that matches nothing, flags that
  // contradict each other): the CLI's usage error (exit 2), not bad input (exit 3).
  static Status usage(std::string message) {
    Status s(std::move(message));
    s.error_->usage = true;
    return s;
  }

  Status(const Status& other) : error_(other.error_ ? std::make_unique<Error>(*other.error_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) error_ = other.error_ ? std::make_unique<Error>(*other.error_) : nullptr;
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  [[nodiscard]] bool ok() const { return error_ == nullptr; }
  explicit operator bool() const { return ok(); }
  [[nodiscard]] const std::string& message() const { return error_ ? error_->message : empty(); }
  [[nodiscard]] bool isUsage() const { return error_ && error_->usage; }
  // The same kind of error, its message preceded by `prefix`.
  [[nodiscard]] Status prefixed(const std::string& prefix) const {
    Status s(*this);
    if (s.error_) s.error_->message = prefix + s.error_->message;
    return s;
  }

  // Bad input, said in plain words first: the headline ("the file ends early: was the dump
  // interrupted?") a user can act on, while message() keeps the detail (file, byte offset,
  // what was expected). The reader sets them (traces/read_problem.h); empty when not set.
  [[nodiscard]] const std::string& headline() const { return error_ ? error_->headline : empty(); }
  [[nodiscard]] const std::string& file() const { return error_ ? error_->file : empty(); }
  [[nodiscard]] bool hasByteOffset() const { return error_ && error_->has_offset; }
  [[nodiscard]] std::uint64_t byteOffset() const { return error_ ? error_->offset : 0; }
  [[nodiscard]] Status withHeadline(std::string headline) const {
    Status s(*this);
    if (s.error_) s.error_->headline = std::move(headline);
    return s;
  }
  // Where in which input: `file`, and the byte offset when there is one.
  [[nodiscard]] Status at(std::string file, std::optional<std::uint64_t> offset) const {
    Status s(*this);
    if (s.error_) {
      s.error_->file = std::move(file);
      s.error_->has_offset = offset.has_value();
      s.error_->offset = offset.value_or(0);
    }
    return s;
  }

 private:
  struct Error {
    std::string message;
    std::string headline;
    std::string file;
    std::uint64_t offset = 0;
    bool has_offset = false;
    bool usage = false;
  };
  explicit Status(std::string message) : error_(std::make_unique<Error>()) { error_->message = std::move(message); }
  static const std::string& empty() {
    static const std::string kEmpty;
    return kEmpty;
  }
  // Null when ok: returning success costs one pointer.
  std::unique_ptr<Error> error_;
};

// A value or the Status explaining why there is none.
template <typename T>
class Expected {
 public:
  Expected(T value) : data_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Expected(Status status) : data_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(data_).ok());
  }

  [[nodiscard]] bool ok() const { return std::holds_alternative<T>(data_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  [[nodiscard]] const Status& status() const { return std::get<Status>(data_); }
  [[nodiscard]] const std::string& message() const { return status().message(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace reservoir
