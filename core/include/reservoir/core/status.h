// Two tiers of errors (see docs/architecture.md): a Status / Expected<T> for fatal input
// problems, counted anomalies (anomalies.h) for per-event ones.
#pragma once

#include <cassert>
#include <memory>
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
    s.usage_ = true;
    return s;
  }

  Status(const Status& other)
      : message_(other.message_ ? std::make_unique<std::string>(*other.message_) : nullptr), usage_(other.usage_) {}
  Status& operator=(const Status& other) {
    if (this != &other) {
      message_ = other.message_ ? std::make_unique<std::string>(*other.message_) : nullptr;
      usage_ = other.usage_;
    }
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  [[nodiscard]] bool ok() const { return message_ == nullptr; }
  explicit operator bool() const { return ok(); }
  [[nodiscard]] const std::string& message() const {
    static const std::string kEmpty;
    return message_ ? *message_ : kEmpty;
  }
  [[nodiscard]] bool isUsage() const { return usage_; }
  // The same kind of error, its message preceded by `prefix`.
  [[nodiscard]] Status prefixed(const std::string& prefix) const {
    Status s(prefix + message());
    s.usage_ = usage_;
    return s;
  }

 private:
  explicit Status(std::string message) : message_(std::make_unique<std::string>(std::move(message))) {}
  // Null when ok: returning success costs one pointer.
  std::unique_ptr<std::string> message_;
  bool usage_ = false;
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
