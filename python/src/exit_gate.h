// Taking the GIL back safely while Python exits. A call works with the GIL released; its calling
// thread takes the GIL back briefly every 10 ms and at the end. A daemon thread that does so while
// the interpreter finalizes is ended by CPython (pthread_exit) in the middle of C++ frames: the
// unwinding destroys a joinable std::thread or leaves a noexcept destructor, and the process ends
// in SIGABRT ("terminate called without an active exception").
//
// So no thread of ours asks for the GIL once Python is exiting: an atexit hook (onPythonExit,
// registered when reservoir._core is imported) closes the gate, cancels every running call and
// waits for their work to stop; a thread that finds the gate closed then parks for good (the
// process is ending: it ends with it), without touching Python again.
#pragma once

#include <Python.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>

namespace reservoir::python {

class ExitGate {
 public:
  static ExitGate& instance() {
    static ExitGate* gate = new ExitGate;  // never destroyed: threads may still use it at exit
    return *gate;
  }

  // PyEval_SaveThread, and PyEval_RestoreThread unless Python is exiting (then the thread parks).
  PyThreadState* release() { return PyEval_SaveThread(); }
  void restore(PyThreadState* state) {
    std::unique_lock gate(gate_);
    if (exiting_ || finalizing()) {
      gate.unlock();
      park();
    }
    PyEval_RestoreThread(state);  // the gate stays shut for the exit hook until the GIL is ours
  }

  // A call's cancel flag while its work runs (set when Python exits), and the work's lifetime.
  // Never called with the GIL held while `gate_` may be waited on: the registry has its own lock.
  void enter(std::atomic<bool>* cancel) {
    std::lock_guard lock(registry_);
    calls_.insert(cancel);
    ++running_;
    if (exiting_flag_) cancel->store(true);
  }
  void leave(std::atomic<bool>* cancel) {
    std::lock_guard lock(registry_);
    calls_.erase(cancel);
    --running_;
    stopped_.notify_all();
  }

  // The atexit hook: with the GIL held by the exiting thread.
  void onPythonExit() {
    PyThreadState* state = PyEval_SaveThread();
    {
      std::lock_guard gate(gate_);  // a thread taking the GIL back holds it until it has the GIL
      exiting_ = true;
    }
    {
      std::unique_lock lock(registry_);
      exiting_flag_ = true;
      for (auto* cancel : calls_) cancel->store(true);
      stopped_.wait(lock, [&] { return running_ == 0; });
    }
    PyEval_RestoreThread(state);
  }

 private:
  ExitGate() = default;

  static bool finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing() != 0;
#else
    return _Py_IsFinalizing() != 0;
#endif
  }

  [[noreturn]] static void park() {
    for (;;) ::pause();
  }

  std::mutex gate_;
  bool exiting_ = false;
  std::mutex registry_;
  std::condition_variable stopped_;
  std::set<std::atomic<bool>*> calls_;
  std::size_t running_ = 0;
  bool exiting_flag_ = false;
};

}  // namespace reservoir::python
