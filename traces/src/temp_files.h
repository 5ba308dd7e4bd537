// The temporary files (X.tmp) the writer has open, listed so that a signal handler can remove
// them (traces::removeTemporaryFilesNow, writer.h) without allocating or locking.
#pragma once

#include <pthread.h>

#include <csignal>
#include <string>

namespace reservoir::traces::detail {

// Holds every signal for as long as it lives: a temporary is created and listed under one, so
// that a signal that came in between does not end the process with the file made but unlisted.
class SignalsHeld {
 public:
  SignalsHeld() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &before_);
  }
  ~SignalsHeld() { pthread_sigmask(SIG_SETMASK, &before_, nullptr); }
  SignalsHeld(const SignalsHeld&) = delete;
  SignalsHeld& operator=(const SignalsHeld&) = delete;

 private:
  sigset_t before_;
};

// Lists `path` (a temporary this process created) for as long as it lives.
class TempListing {
 public:
  explicit TempListing(const std::string& path);
  ~TempListing();
  TempListing(const TempListing&) = delete;
  TempListing& operator=(const TempListing&) = delete;

 private:
  int slot_ = -1;
};

}  // namespace reservoir::traces::detail
