// Long library calls from Python: the work runs on a thread of its own with the GIL released,
// while the calling thread waits, waking every 10 ms to take the GIL briefly, run Python's
// signal handlers (Ctrl-C: KeyboardInterrupt) and call the caller's progress callback. A raised
// exception sets the library's cancel flag, and is raised once the work has stopped. Python's
// exit cancels the work too, and the waiting thread then never takes the GIL again (exit_gate.h).
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

#include "exit_gate.h"

namespace reservoir::python {

namespace py = pybind11;

class Interruptible {
 public:
  // How often the calling thread wakes: Ctrl-C reaches the work within this and the work's next
  // cancel check (a few milliseconds of replay); taking the GIL 100 times a second costs nothing.
  static constexpr int kPollMs = 10;

  // `progress`: None, or a callable progress(done, total).
  // `on_poll`: called on the calling thread with the GIL at every wake-up and at the end.
  explicit Interruptible(py::object progress, std::function<void()> on_poll = {})
      : progress_(std::move(progress)), on_poll_(std::move(on_poll)) {}

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
  // While Python exits, the calling thread parks instead of taking the GIL back (exit_gate.h).
  template <class F>
  auto run(F&& work) -> decltype(work()) {
    std::optional<decltype(work())> result;
    std::exception_ptr failure;
    ExitGate& gate = ExitGate::instance();
    {
      PyThreadState* state = gate.release();
      std::mutex m;
      std::condition_variable cv;
      bool finished = false;
      gate.enter(&cancel_);
      std::thread worker;
      try {
        worker = std::thread([&] {
          try {
            result.emplace(work());
          } catch (...) {
            failure = std::current_exception();
          }
          {
            std::lock_guard lock(m);
            finished = true;
            cv.notify_all();
          }
          gate.leave(&cancel_);  // here, not on the calling thread: that one parks if Python exits
        });
      } catch (...) {  // no thread to run the work on
        gate.leave(&cancel_);
        gate.restore(state);
        throw;
      }
      std::unique_lock lock(m);
      while (!cv.wait_for(lock, std::chrono::milliseconds(kPollMs), [&] { return finished; })) {
        lock.unlock();
        gate.restore(state);
        poll();
        state = gate.release();
        lock.lock();
      }
      lock.unlock();
      worker.join();
      gate.restore(state);
    }
    if (!failure) poll();  // the last progress the work reported, even when it ended within one poll
    if (error_) throw *error_;
    if (failure) std::rethrow_exception(failure);
    return std::move(*result);
  }

 private:
  // With the GIL held: signals first, then the progress callback.
  void poll() {
    if (on_poll_) on_poll_();
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
  std::function<void()> on_poll_;
  std::atomic<bool> cancel_{false};
  std::atomic<std::uint64_t> done_{0}, total_{0};
  std::uint64_t reported_ = ~std::uint64_t{0};
  std::optional<py::error_already_set> error_;
};

}  // namespace reservoir::python
