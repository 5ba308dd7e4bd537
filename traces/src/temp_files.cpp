#include "temp_files.h"

#include <unistd.h>

#include <csignal>
#include <cstring>
#include <mutex>

#include "reservoir/traces/writer.h"

namespace reservoir::traces {
namespace {

// A fixed table of paths with a flag each: the signal's side only reads flags and unlinks.
constexpr int kTempSlots = 8;
char g_temp_paths[kTempSlots][4096];
volatile std::sig_atomic_t g_temp_live[kTempSlots];
std::mutex g_temp_mutex;

}  // namespace

void removeTemporaryFilesNow() noexcept {
  for (int i = 0; i < kTempSlots; ++i)
    if (g_temp_live[i]) ::unlink(g_temp_paths[i]);
}

namespace detail {

TempListing::TempListing(const std::string& path) {
  const std::lock_guard<std::mutex> lock(g_temp_mutex);
  for (int i = 0; i < kTempSlots && path.size() < sizeof(g_temp_paths[i]); ++i)
    if (!g_temp_live[i]) {
      std::memcpy(g_temp_paths[i], path.c_str(), path.size() + 1);
      g_temp_live[i] = 1;
      slot_ = i;
      return;
    }
}

TempListing::~TempListing() {
  if (slot_ >= 0) g_temp_live[slot_] = 0;
}

}  // namespace detail
}  // namespace reservoir::traces
