// One file's entry in the snapshot cache (reservoir/traces/snapshot_cache.h).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "reservoir/traces/reader.h"

namespace reservoir::traces::detail {

// What makes a file the same file: replaced, written or touched, one of these changes.
struct FileIdentity {
  std::uint64_t device = 0, inode = 0, size = 0;
  std::int64_t modified_ns = 0, changed_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};

class CacheEntry {
 public:
  // The entry a read of `path` with `options` uses; none where it uses no cache (none set, a
  // file under the cache's minimum, not a regular file, no folder).
  static std::optional<CacheEntry> forRead(const std::string& path, const ReadOptions& options);
  // The snapshot kept for this file, if there is one for it as it is now.
  [[nodiscard]] std::optional<Snapshot> load() const;
  // Keeps `snap`, read from this file, unless the file changed since forRead or too lately. A
  // failure (no room, no folder, an exception) keeps nothing and is not reported.
  void store(const Snapshot& snap) const;

 private:
  CacheEntry() = default;
  void write(const Snapshot& snap) const;
  void writeKey(class CacheOut& out) const;
  // The key's numbers after its path: the file's identity and the limits' fingerprint.
  [[nodiscard]] std::array<std::uint64_t, 6> keyWords() const;
  [[nodiscard]] bool sameKey(class CacheIn& in) const;

  SnapshotCache cache_;
  std::string entry_;      // the entry's file in the folder
  std::string canonical_;  // the snapshot's path, links resolved
  FileIdentity file_;
  std::uint64_t limits_ = 0;  // the read limits' fingerprint
};

}  // namespace reservoir::traces::detail
