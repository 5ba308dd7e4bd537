// The temporary files (X.tmp) the writer has open, listed so that a signal handler can remove
// them (traces::removeTemporaryFilesNow, writer.h) without allocating or locking.
#pragma once

#include <string>

namespace reservoir::traces::detail {

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
