#include "reservoir/traces/snapshot_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <optional>
#include <random>
#include <system_error>
#include <vector>

#include "cache_entry.h"
#include "cache_schema.h"
#include "snapshot_codec.h"
#include "temp_files.h"

namespace reservoir::traces {
namespace {

namespace fs = std::filesystem;

std::mutex g_cache_mutex;
std::optional<SnapshotCache> g_cache;
std::atomic<std::uint64_t> g_loaded{0}, g_stored{0};

constexpr char kMagic[8] = {'R', 'S', 'V', 'R', 'C', 'A', 'C', 'H'};
constexpr std::uint64_t kFormat = 1;
constexpr std::string_view kEntrySuffix = ".snapshot";

std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 0xcbf29ce484222325ull) {
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

std::uint64_t limitsFingerprint(const ReadLimits& l) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const std::uint64_t v :
       {l.max_stack_values, l.max_marks, l.max_memo_entries, l.max_memo_gap, l.max_string_bytes, l.max_container_items,
        l.max_event_extras, l.memory_floor_bytes, l.memory_per_pickle_byte,
        std::uint64_t{l.memory_cap_bytes.has_value()}, l.memory_cap_bytes.value_or(0), l.memory_cap_floor_bytes,
        l.memory_cap_per_plain_byte, l.memory_cap_per_compressed_byte})
    h = fnv1a(std::string_view(reinterpret_cast<const char*>(&v), sizeof v), h);
  return h;
}

std::int64_t nanoseconds(const timespec& t) { return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; }

std::optional<detail::FileIdentity> identityOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return detail::FileIdentity{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
                              static_cast<std::uint64_t>(st.st_size), nanoseconds(st.st_mtim), nanoseconds(st.st_ctim)};
}

// Whether `folder` is a folder of this user's that no one else can write to: entries in one that
// others could write to could be theirs (a planted entry would give wrong answers).
bool privateFolder(const std::string& folder) {
  struct stat st {};
  return ::stat(folder.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() &&
         (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

std::int64_t nowNs() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return nanoseconds(t);
}

// Makes room for an entry of about `bytes` in the folder: removes the least recently used
// entries, none used since `keep_after` (and temporaries an hour old: a process that died while
// writing). False, and nothing removed, where that does not make room.
bool makeRoom(const std::string& folder, std::uint64_t bytes, std::uint64_t max_bytes, fs::file_time_type keep_after) {
  struct Entry {
    fs::file_time_type used;
    std::uint64_t bytes;
    fs::path path;
  };
  std::vector<Entry> entries;
  std::uint64_t total = bytes;
  std::error_code ec;
  const auto stale = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (const auto& d : fs::directory_iterator(folder, ec)) {
    const std::string name = d.path().filename().string();
    const auto used = d.last_write_time(ec);
    if (ec) continue;
    if (name.ends_with(".tmp") && used < stale) {
      fs::remove(d.path(), ec);
    } else if (name.ends_with(kEntrySuffix)) {
      const std::uint64_t size = d.file_size(ec);
      if (ec) continue;
      entries.push_back({used, size, d.path()});
      total += size;
    }
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  std::size_t go = 0;  // the entries [0, go) make the room
  for (std::uint64_t left = total; left > max_bytes; left -= entries[go++].bytes)
    if (go == entries.size() || entries[go].used >= keep_after) return false;
  for (std::size_t i = 0; i < go; ++i) fs::remove(entries[i].path, ec);
  return true;
}

// About the bytes an entry of `snap` takes: its columns (the rest is small beside them).
std::uint64_t entryBytesOf(const Snapshot& snap) {
  std::uint64_t bytes = snap.stack_frames.size() * sizeof(FrameId) + snap.blocks.size() * 40;
  for (const DeviceTrace& d : snap.devices) bytes += d.events.size() * sizeof(TraceEvent) + d.times.memoryBytes();
  return bytes;
}

}  // namespace

std::optional<SnapshotCache> defaultSnapshotCache() {
  const std::lock_guard<std::mutex> lock(g_cache_mutex);
  return g_cache;
}

void setDefaultSnapshotCache(std::optional<SnapshotCache> cache) {
  const std::lock_guard<std::mutex> lock(g_cache_mutex);
  g_cache = std::move(cache);
}

std::string standardCacheFolder() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/') return std::string(xdg) + "/reservoir";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/reservoir";
  return {};
}

SnapshotCacheCounts snapshotCacheCounts() { return {g_loaded.load(), g_stored.load()}; }

namespace detail {

std::optional<CacheEntry> CacheEntry::forRead(const std::string& path, const ReadOptions& options) {
  if (!options.cache || options.cache->folder.empty()) return std::nullopt;
  // A folder others can write to is not used (one not made yet is made the user's alone).
  if (struct stat st{}; ::stat(options.cache->folder.c_str(), &st) == 0 && !privateFolder(options.cache->folder))
    return std::nullopt;
  const auto file = identityOf(path);
  if (!file || file->size < options.cache->min_file_bytes) return std::nullopt;
  std::error_code ec;
  const fs::path canonical = fs::canonical(path, ec);
  if (ec) return std::nullopt;
  CacheEntry e;
  e.cache_ = *options.cache;
  e.canonical_ = canonical.string();
  e.file_ = *file;
  e.limits_ = limitsFingerprint(options.limits);
  char name[17];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(fnv1a(e.canonical_)));
  e.entry_ = e.cache_.folder + "/" + name + std::string(kEntrySuffix);
  return e;
}

void CacheEntry::writeKey(CacheOut& out) const {
  out.bytes(kMagic, sizeof kMagic);
  out.u64(kFormat);
  out.str(kCacheSchema);
  out.str(canonical_);
  for (const std::uint64_t v : keyWords()) out.u64(v);
}

std::array<std::uint64_t, 6> CacheEntry::keyWords() const {
  return {file_.device,
          file_.inode,
          file_.size,
          static_cast<std::uint64_t>(file_.modified_ns),
          static_cast<std::uint64_t>(file_.changed_ns),
          limits_};
}

bool CacheEntry::sameKey(CacheIn& in) const {
  char magic[sizeof kMagic];
  in.bytes(magic, sizeof magic);
  if (!std::equal(magic, magic + sizeof magic, kMagic) || in.u64() != kFormat) return false;
  if (in.str() != kCacheSchema || in.str() != canonical_) return false;
  for (const std::uint64_t v : keyWords())
    if (in.u64() != v) return false;
  return in.ok();
}

std::optional<Snapshot> CacheEntry::load() const {
  const int fd = ::open(entry_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<Snapshot> snap;
  try {
    if (::fstat(fd, &st) == 0) {
      CacheIn in(fd, static_cast<std::uint64_t>(st.st_size));
      if (sameKey(in)) snap = loadSnapshot(in);
      if (snap) ::futimens(fd, nullptr);  // used now: trimmed last
    }
  } catch (const std::exception&) {  // out of memory, a folder that failed: the file is read instead
    snap.reset();
  }
  ::close(fd);
  if (snap) ++g_loaded;
  return snap;
}

void CacheEntry::store(const Snapshot& snap) const {
  try {
    write(snap);
  } catch (const std::exception&) {  // the cache is passed over; the read itself succeeded
  }
}

void CacheEntry::write(const Snapshot& snap) const {
  // Changed while it was read, or so lately that a change to come could keep its times: not kept.
  const auto now = identityOf(canonical_);
  const std::int64_t settled = nowNs() - cache_.settle_ns;
  if (!now || !(*now == file_) || file_.modified_ns > settled || file_.changed_ns > settled) return;
  std::error_code ec;
  if (fs::create_directories(cache_.folder, ec)) ::chmod(cache_.folder.c_str(), 0700);  // made here: the user's alone
  if (ec || !privateFolder(cache_.folder)) return;
  const auto keep_after = fs::file_time_type::clock::now() - std::chrono::nanoseconds(cache_.keep_used_ns);
  const std::uint64_t bytes = entryBytesOf(snap);
  if (bytes > cache_.max_folder_bytes || !makeRoom(cache_.folder, bytes, cache_.max_folder_bytes, keep_after)) return;
  std::random_device rd;
  const std::string temp = entry_ + "." + std::to_string(::getpid()) + "." + std::to_string(rd()) + ".tmp";
  std::optional<TempListing> listed;  // a signal removes it
  const int fd = [&] {
    const SignalsHeld held;
    const int made = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (made >= 0) listed.emplace(temp);
    return made;
  }();
  if (fd < 0) return;
  bool ok = false;
  try {
    CacheOut out(fd);
    writeKey(out);
    saveSnapshot(out, snap);
    ok = out.finish();
  } catch (const std::exception&) {  // out of memory for the buffer: nothing kept
    ok = false;
  }
  ok = ::close(fd) == 0 && ok;
  struct stat st {};
  ok = ok && ::stat(temp.c_str(), &st) == 0 && static_cast<std::uint64_t>(st.st_size) <= cache_.max_folder_bytes &&
       ::rename(temp.c_str(), entry_.c_str()) == 0;
  if (!ok) {
    ::unlink(temp.c_str());
    return;
  }
  ++g_stored;
}

}  // namespace detail
}  // namespace reservoir::traces
