// The snapshot cache: what a read of a large snapshot made, kept in a folder of the user's, so
// that the next read of the same file loads it instead of parsing the pickle again (a 1 GB dump
// parses in seconds and loads in a fraction of one). An entry is used only for the same file,
// unchanged (device, inode, size, modification and change times), read with the same limits by
// a build of the same reader (its sources' hash): anything else is a miss, and the file is read.
// Entries are written whole or not at all (a temporary renamed), never for a file changed in the
// last seconds or during its read, and the folder is trimmed, least recently used first. A
// cache that cannot be used (no folder, no room, a damaged entry) is passed over in silence.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

namespace reservoir::traces {

struct SnapshotCache {
  std::string folder;
  // Smaller files are read each time: their parse takes less than the cache saves.
  std::uint64_t min_file_bytes = 32ull << 20;
  // The folder's entries together stay under this; the least recently used go first, but not
  // those used in the last `keep_used_ns`: a new entry that would push one of those out is not
  // written (a folder of 192 ranks' dumps is kept in part, not written and pushed out in turn).
  std::uint64_t max_folder_bytes = 8ull << 30;
  std::int64_t keep_used_ns = 3600ll * 1'000'000'000;
  // A file modified or changed less than this before its read ends may still be being written
  // (or be written again within its file system's clock resolution): its read is not kept.
  std::int64_t settle_ns = 2'000'000'000;
};

// The cache every read uses that does not set its own; none unless a front end sets one
// (replay::applySnapshotCacheFromEnvironment).
std::optional<SnapshotCache> defaultSnapshotCache();
void setDefaultSnapshotCache(std::optional<SnapshotCache> cache);

// $XDG_CACHE_HOME/reservoir, else $HOME/.cache/reservoir; empty when neither is set.
std::string standardCacheFolder();

// Reads counted since the process started: entries loaded, and entries written.
struct SnapshotCacheCounts {
  std::uint64_t loaded = 0;
  std::uint64_t stored = 0;
};
SnapshotCacheCounts snapshotCacheCounts();

}  // namespace reservoir::traces
