// Long library calls from Python: the work runs on a thread of its own with the GIL released,
// while the calling thread waits, waking every 50 ms to take the GIL briefly, run Python's
// signal handlers (Ctrl-C: KeyboardInterrupt) and call the caller's progress callback. A raised
// exception sets the library's cancel flag, and is raised once the work has stopped.
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace reservoir::python {

namespace py = pybind11;

class Interruptible {
 public:
  // `progress`: None, or a callable progress(done, total).
  explicit Interruptible(py::object progress) : progress_(std::move(progress)) {}

  // For the library's options: where it looks for a cancel, where it reports progress.
  [[nodiscard]] const std::atomic<bool>* cancelFlag() const { return &cancel_; }
  [[nodiscard]] std::function<void(std::uint64_t, std::uint64_t)> progressFn() {
    return [this](std::uint64_t done, std::uint64_t total) {
      total_ = total;
      done_ = done;
    };
  }
  [[nodiscard]] bool cancelled() const { return cancel_; }

  // Runs `work` (called without the GIL; it must not touch Python objects) and returns its result;
  // raises what the caller's signal handlers or progress callback raised, or what `work` threw.
  template <class F>
  auto run(F&& work) -> decltype(work()) {
    std::optional<decltype(work())> result;
    std::exception_ptr failure;
    {
      py::gil_scoped_release release;
      std::mutex m;
      std::condition_variable cv;
      bool finished = false;
      std::thread worker([&] {
        try {
          result.emplace(work());
        } catch (...) {
          failure = std::current_exception();
        }
        std::lock_guard lock(m);
        finished = true;
        cv.notify_all();
      });
      std::unique_lock lock(m);
      while (!cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return finished; })) {
        lock.unlock();
        {
          py::gil_scoped_acquire gil;
          poll();
        }
        lock.lock();
      }
      lock.unlock();
      worker.join();
    }
    if (!failure) poll();  // the last progress the work reported, even when it ended within one poll
    if (error_) throw *error_;
    if (failure) std::rethrow_exception(failure);
    return std::move(*result);
  }

 private:
  // With the GIL held: signals first, then the progress callback.
  void poll() {
    if (error_) return;
    if (PyErr_CheckSignals() != 0) {
      error_.emplace();
      cancel_ = true;
      return;
    }
    const std::uint64_t done = done_;
    if (progress_.is_none() || done == reported_) return;
    reported_ = done;
    try {
      progress_(done, static_cast<std::uint64_t>(total_));
    } catch (py::error_already_set& e) {
      error_.emplace(std::move(e));
      cancel_ = true;
    }
  }

  py::object progress_;
  std::atomic<bool> cancel_{false};
  std::atomic<std::uint64_t> done_{0}, total_{0};
  std::uint64_t reported_ = ~std::uint64_t{0};
  std::optional<py::error_already_set> error_;
};

}  // namespace reservoir::python
