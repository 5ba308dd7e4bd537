#include "snapshot_codec.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <type_traits>

#include <unistd.h>

#include "huge_pages.h"

namespace reservoir::traces::detail {

// Every field of these is written below: one added to them must be added there too (and the
// cache's schema, which follows the traces library's sources, changes with it). The sizes are
// those of a 64-bit libstdc++ build, where the check runs.
#if defined(__GLIBCXX__) && defined(__LP64__)
static_assert(sizeof(Snapshot) == 1240, "a new Snapshot field: save and load it in snapshot_codec.cpp");
static_assert(sizeof(SegmentInfo) == 96, "a new SegmentInfo field: save and load it in snapshot_codec.cpp");
static_assert(sizeof(BlockInfo) == 32, "a new BlockInfo field: save and load it in snapshot_codec.cpp");
static_assert(sizeof(Frame) == 24, "a new Frame field: save and load it in snapshot_codec.cpp");
static_assert(sizeof(EventExtra) == 40, "a new EventExtra field: save and load it in snapshot_codec.cpp");
static_assert(sizeof(RecordedSettings) == 240, "a new setting: save and load it in snapshot_codec.cpp");
static_assert(sizeof(Annotation) == 80, "a new Annotation field: save and load it in snapshot_codec.cpp");
static_assert(sizeof(DeviceTrace) == 104, "a new DeviceTrace field: save and load it in snapshot_codec.cpp");
#endif
// The columns written as they lie in memory: no padding, so no byte of them is undefined.
static_assert(std::has_unique_object_representations_v<TraceEvent>);
static_assert(std::has_unique_object_representations_v<FrameId>);

void StreamDigest::word(std::uint64_t w) {
  std::uint64_t& h = lanes_[words_++ & 3];
  h = (h ^ w) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
}

void StreamDigest::update(const std::uint8_t* p, std::size_t n) {
  while (n > 0 && pending_n_ != 0) {
    pending_ |= std::uint64_t{*p++} << (8 * pending_n_);
    --n;
    if (++pending_n_ == 8) {
      word(pending_);
      pending_ = 0;
      pending_n_ = 0;
    }
  }
  while (n >= 8 && (words_ & 3) != 0) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    word(w);
    p += 8;
    n -= 8;
  }
  if (n >= 32) {  // the four lanes side by side, in registers
    std::uint64_t a = lanes_[0], b = lanes_[1], c = lanes_[2], d = lanes_[3];
    const auto mix = [](std::uint64_t h, const std::uint8_t* at) {
      std::uint64_t w;
      std::memcpy(&w, at, 8);
      h = (h ^ w) * 0x9E3779B97F4A7C15ull;
      return h ^ (h >> 29);
    };
    const std::size_t blocks = n / 32;
    for (std::size_t i = 0; i < blocks; ++i, p += 32) {
      a = mix(a, p);
      b = mix(b, p + 8);
      c = mix(c, p + 16);
      d = mix(d, p + 24);
    }
    lanes_[0] = a, lanes_[1] = b, lanes_[2] = c, lanes_[3] = d;
    words_ += 4 * blocks;
    n -= 32 * blocks;
  }
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    word(w);
  }
  for (; n > 0; --n) pending_ |= std::uint64_t{*p++} << (8 * pending_n_++);
}

std::uint64_t StreamDigest::value() const {
  std::uint64_t h = words_ * 8 + pending_n_;
  for (const std::uint64_t lane : lanes_) h = (h ^ lane) * 0xff51afd7ed558ccdull + (h >> 31);
  h = (h ^ pending_) * 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

void CacheOut::writeAll(const std::uint8_t* p, std::size_t n) {
  while (ok_ && n > 0) {
    const ssize_t got = ::write(fd_, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      ok_ = false;
      return;
    }
    p += got;
    n -= static_cast<std::size_t>(got);
  }
}

void CacheOut::flush() {
  digest_.update(buf_.data(), buf_.size());
  writeAll(buf_.data(), buf_.size());
  buf_.clear();
}

void CacheOut::bytes(const void* data, std::size_t n) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  if (n >= kBuffer / 4) {  // a column: straight from memory
    flush();
    digest_.update(p, n);
    writeAll(p, n);
    return;
  }
  if (buf_.size() + n > kBuffer) flush();
  buf_.insert(buf_.end(), p, p + n);
}

bool CacheOut::finish() {
  flush();
  const std::uint64_t digest = digest_.value();
  writeAll(reinterpret_cast<const std::uint8_t*>(&digest), sizeof digest);
  return ok_;
}

void CacheIn::digestRead(const std::uint8_t* p, std::size_t got) {
  const std::uint64_t covered = size_ >= sizeof(std::uint64_t) ? size_ - sizeof(std::uint64_t) : 0;
  if (read_ < covered) digest_.update(p, static_cast<std::size_t>(std::min<std::uint64_t>(got, covered - read_)));
  read_ += got;
}

bool CacheIn::fill() {
  if (!ok_ || left_ == 0) return false;
  buf_.resize(kBuffer);
  for (;;) {
    const ssize_t got = ::read(fd_, buf_.data(), static_cast<std::size_t>(std::min<std::uint64_t>(kBuffer, left_)));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    at_ = 0;
    end_ = static_cast<std::size_t>(got);
    left_ -= static_cast<std::uint64_t>(got);
    digestRead(buf_.data(), end_);
    return true;
  }
}

void CacheIn::bytes(void* data, std::size_t n) {
  auto* p = static_cast<std::uint8_t*>(data);
  while (ok_ && n > 0) {
    if (at_ == end_ && n >= kBuffer && n <= left_) {  // a column: straight into its memory
      const ssize_t got = ::read(fd_, p, n);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      digestRead(p, static_cast<std::size_t>(got));
      p += got;
      n -= static_cast<std::size_t>(got);
      left_ -= static_cast<std::uint64_t>(got);
      continue;
    }
    if (at_ == end_ && !fill()) break;
    const std::size_t take = std::min(n, end_ - at_);
    std::memcpy(p, buf_.data() + at_, take);
    at_ += take;
    p += take;
    n -= take;
  }
  if (n > 0) {
    ok_ = false;
    std::memset(p, 0, n);
  }
}

bool CacheIn::finish() {
  const std::uint64_t stored = u64();
  return ok_ && left_ == 0 && at_ == end_ && stored == digest_.value();
}

std::string CacheIn::str() {
  const std::uint64_t n = u64();
  if (!fits(n, 1)) {
    ok_ = false;
    return {};
  }
  std::string s(n, '\0');
  bytes(s.data(), n);
  return s;
}

namespace {

template <typename T>
void savePods(CacheOut& out, const std::vector<T>& v) {
  out.u64(v.size());
  out.bytes(v.data(), v.size() * sizeof(T));
}

template <typename T>
bool loadPods(CacheIn& in, std::vector<T>& v) {
  const std::uint64_t n = in.u64();
  if (!in.fits(n, sizeof(T))) return false;
  v.reserve(n);
  adviseHugePages(v.data(), n * sizeof(T));
  v.resize(n);
  in.bytes(v.data(), n * sizeof(T));
  return in.ok();
}

template <typename Id>
Id idFrom(std::uint64_t v) {
  return Id(static_cast<typename Id::rep_type>(v));
}

void saveOptional(CacheOut& out, const auto& v) {
  out.u64(v.has_value());
  out.u64(v ? static_cast<std::uint64_t>(*v) : 0);
}

template <typename T>
std::optional<T> loadOptional(CacheIn& in) {
  const bool has = in.u64() != 0;
  const std::uint64_t v = in.u64();
  if (!has) return std::nullopt;
  if constexpr (std::is_same_v<T, bool>) return v != 0;
  return static_cast<T>(v);
}

// ---------------------------------------------------------------- save

void saveTables(CacheOut& out, const Snapshot& s) {
  out.u64(s.strings.size());
  for (std::uint32_t i = 0; i < s.strings.size(); ++i) out.str(s.strings.view(StringId(i)));
  out.u64(s.extras.size());
  for (std::uint32_t i = 0; i < s.extras.size(); ++i) {
    const EventExtra& x = s.extras[EventExtraId(i)];
    out.u64(x.stream);
    out.u64(static_cast<std::uint64_t>(x.pool.first));
    out.u64(static_cast<std::uint64_t>(x.pool.second));
    out.u64(x.forward_stack.value());
    out.u64(x.compile_context.value());
    out.u64(x.user_metadata.value());
    out.u64(std::uint64_t{x.has_frames} | std::uint64_t{x.has_pool} << 1 | std::uint64_t{x.has_forward_frames} << 2);
  }
  out.u64(s.frames.size());
  for (const Frame& f : s.frames) {
    out.u64(f.filename.value());
    out.u64(f.name.value());
    out.u64(static_cast<std::uint64_t>(f.line));
    out.u64(f.fx.value());
  }
  savePods(out, s.stack_offsets);
  savePods(out, s.stack_frames);
}

void saveSegments(CacheOut& out, const Snapshot& s) {
  out.u64(s.segments.size());
  for (const SegmentInfo& g : s.segments) {
    for (std::uint64_t v : {static_cast<std::uint64_t>(g.device), g.address, g.total_size, g.allocated_size,
                            g.active_size, g.requested_size, g.stream, static_cast<std::uint64_t>(g.pool.first),
                            static_cast<std::uint64_t>(g.pool.second), std::uint64_t{g.stack.value()},
                            std::uint64_t{g.first_block}, std::uint64_t{g.block_count}})
      out.u64(v);
    out.u64(std::uint64_t{g.is_large} | std::uint64_t{g.is_expandable} << 1 |
            std::uint64_t{static_cast<std::uint8_t>(g.frames_key)} << 8);
  }
  out.u64(s.blocks.size());
  for (const BlockInfo& b : s.blocks) {
    out.u64(b.address);
    out.u64(b.size);
    out.u64(b.requested_size);
    out.u64(b.stack.value());
    out.u64(static_cast<std::uint8_t>(b.state));
  }
}

void saveSettings(CacheOut& out, const RecordedSettings& r) {
  out.u64(r.present);
  out.str(r.alloc_conf);
  out.u64(static_cast<std::uint64_t>(r.max_split_size));
  out.u64(std::bit_cast<std::uint64_t>(r.garbage_collection_threshold));
  out.u64(r.expandable_segments);
  saveOptional(out, r.release_lock_on_cudamalloc);
  saveOptional(out, r.graph_capture_record_stream_reuse);
  saveOptional(out, r.pinned_num_register_threads);
  saveOptional(out, r.pinned_use_cuda_host_register);
  for (const std::uint64_t d : r.roundup_power2_divisions) out.u64(d);
  out.u64(r.other.size());
  for (const auto& [k, v] : r.other) {
    out.str(k);
    out.str(v);
  }
}

void saveRest(CacheOut& out, const Snapshot& s) {
  out.u64(s.annotations.size());
  for (const Annotation& a : s.annotations) {
    out.str(a.stage);
    out.str(a.name);
    out.u64(static_cast<std::uint64_t>(a.device));
    out.u64(static_cast<std::uint64_t>(a.time_us));
  }
  for (std::size_t k = 0; k < AnomalyCounters::kCount; ++k) {
    const auto a = static_cast<Anomaly>(k);
    out.u64(s.anomalies.count(a));
    out.u64(s.anomalies.examples(a).size());
    for (const std::string& e : s.anomalies.examples(a)) out.str(e);
  }
}

// ---------------------------------------------------------------- load

bool loadTables(CacheIn& in, Snapshot& s) {
  const std::uint64_t strings = in.u64();
  if (!in.fits(strings, 8)) return false;
  for (std::uint64_t i = 0; i < strings; ++i)
    if (s.strings.intern(in.str()).value() != i || !in.ok()) return false;  // a repeated string: not ours
  const std::uint64_t extras = in.u64();
  if (extras == 0 || !in.fits(extras, 56)) return false;
  for (std::uint64_t i = 0; i < extras; ++i) {
    EventExtra x;
    x.stream = in.u64();
    x.pool.first = static_cast<std::int64_t>(in.u64());
    x.pool.second = static_cast<std::int64_t>(in.u64());
    x.forward_stack = idFrom<StackId>(in.u64());
    x.compile_context = idFrom<StringId>(in.u64());
    x.user_metadata = idFrom<StringId>(in.u64());
    const std::uint64_t flags = in.u64();
    x.has_frames = flags & 1;
    x.has_pool = flags & 2;
    x.has_forward_frames = flags & 4;
    if (flags > 7 || s.extras.intern(x).value() != i) return false;
  }
  const std::uint64_t frames = in.u64();
  if (!in.fits(frames, 32)) return false;
  s.frames.resize(frames);
  for (Frame& f : s.frames) {
    f.filename = idFrom<StringId>(in.u64());
    f.name = idFrom<StringId>(in.u64());
    f.line = static_cast<std::int64_t>(in.u64());
    f.fx = idFrom<StringId>(in.u64());
  }
  return loadPods(in, s.stack_offsets) && loadPods(in, s.stack_frames);
}

bool loadSegments(CacheIn& in, Snapshot& s) {
  const std::uint64_t segments = in.u64();
  if (!in.fits(segments, 104)) return false;
  s.segments.resize(segments);
  for (SegmentInfo& g : s.segments) {
    g.device = static_cast<std::int64_t>(in.u64());
    g.address = in.u64();
    g.total_size = in.u64();
    g.allocated_size = in.u64();
    g.active_size = in.u64();
    g.requested_size = in.u64();
    g.stream = in.u64();
    g.pool.first = static_cast<std::int64_t>(in.u64());
    g.pool.second = static_cast<std::int64_t>(in.u64());
    g.stack = idFrom<StackId>(in.u64());
    g.first_block = static_cast<std::uint32_t>(in.u64());
    g.block_count = static_cast<std::uint32_t>(in.u64());
    const std::uint64_t flags = in.u64();
    g.is_large = flags & 1;
    g.is_expandable = flags & 2;
    if ((flags & ~std::uint64_t{0x3ff}) || (flags >> 8) > 2) return false;
    g.frames_key = static_cast<SegmentInfo::FramesKey>(flags >> 8);
  }
  const std::uint64_t blocks = in.u64();
  if (!in.fits(blocks, 40)) return false;
  s.blocks.resize(blocks);
  for (BlockInfo& b : s.blocks) {
    b.address = in.u64();
    b.size = in.u64();
    b.requested_size = in.u64();
    b.stack = idFrom<StackId>(in.u64());
    const std::uint64_t state = in.u64();
    if (state > static_cast<std::uint8_t>(BlockState::kUnknown)) return false;
    b.state = static_cast<BlockState>(state);
  }
  return in.ok();
}

bool loadSettings(CacheIn& in, RecordedSettings& r) {
  r.present = in.u64() != 0;
  r.alloc_conf = in.str();
  r.max_split_size = static_cast<std::int64_t>(in.u64());
  r.garbage_collection_threshold = std::bit_cast<double>(in.u64());
  r.expandable_segments = in.u64() != 0;
  r.release_lock_on_cudamalloc = loadOptional<bool>(in);
  r.graph_capture_record_stream_reuse = loadOptional<bool>(in);
  r.pinned_num_register_threads = loadOptional<std::int64_t>(in);
  r.pinned_use_cuda_host_register = loadOptional<bool>(in);
  for (std::uint64_t& d : r.roundup_power2_divisions) d = in.u64();
  const std::uint64_t other = in.u64();
  if (!in.fits(other, 16)) return false;
  r.other.resize(other);
  for (auto& [k, v] : r.other) {
    k = in.str();
    v = in.str();
  }
  return in.ok();
}

bool loadRest(CacheIn& in, Snapshot& s) {
  const std::uint64_t annotations = in.u64();
  if (!in.fits(annotations, 32)) return false;
  s.annotations.resize(annotations);
  for (Annotation& a : s.annotations) {
    a.stage = in.str();
    a.name = in.str();
    a.device = static_cast<std::int64_t>(in.u64());
    a.time_us = static_cast<std::int64_t>(in.u64());
  }
  for (std::size_t k = 0; k < AnomalyCounters::kCount; ++k) {
    const auto a = static_cast<Anomaly>(k);
    const std::uint64_t count = in.u64();
    const std::uint64_t examples = in.u64();
    if (examples > AnomalyCounters::kMaxExamples) return false;
    for (std::uint64_t e = 0; e < examples; ++e) s.anomalies.add(a, in.str(), 0);
    if (s.anomalies.examples(a).size() != examples) return false;
    s.anomalies.add(a, {}, count);
  }
  return in.ok();
}

// Every id names something the snapshot holds: what the rest of the program takes for granted
// of a snapshot the reader made.
bool idsInRange(const Snapshot& s) {
  const auto str = [&](StringId id) { return !id.valid() || id.value() < s.strings.size(); };
  const auto stack = [&](StackId id) { return !id.valid() || id.value() < s.stackCount(); };
  if (s.stack_offsets.empty() || s.stack_offsets.front() != 0 || s.stack_offsets.back() != s.stack_frames.size() ||
      !std::is_sorted(s.stack_offsets.begin(), s.stack_offsets.end()))
    return false;
  for (const FrameId f : s.stack_frames)
    if (f.value() >= s.frames.size()) return false;
  for (const Frame& f : s.frames)
    if (!str(f.filename) || !str(f.name) || !str(f.fx)) return false;
  for (std::uint32_t i = 0; i < s.extras.size(); ++i) {
    const EventExtra& x = s.extras[EventExtraId(i)];
    if (!stack(x.forward_stack) || !str(x.compile_context) || !str(x.user_metadata)) return false;
  }
  for (const DeviceTrace& d : s.devices)
    for (const TraceEvent& e : d.events)
      if (!stack(e.stack) || e.extra_index >= s.extras.size() || e.action > Action::kUnknown) return false;
  for (const SegmentInfo& g : s.segments)
    if (!stack(g.stack) || std::uint64_t{g.first_block} + g.block_count > s.blocks.size()) return false;
  for (const BlockInfo& b : s.blocks)
    if (!stack(b.stack)) return false;
  return true;
}

}  // namespace

void saveSnapshot(CacheOut& out, const Snapshot& s) {
  out.u64(static_cast<std::uint64_t>(s.pickle_protocol));
  out.u64(static_cast<std::uint8_t>(s.compression));
  out.u64(s.file_bytes);
  out.u64(s.pickle_bytes);
  saveTables(out, s);
  out.u64(s.devices.size());
  for (const DeviceTrace& d : s.devices) {
    out.u64(static_cast<std::uint64_t>(d.device));
    savePods(out, d.events);
    d.times.save(out);
  }
  saveSegments(out, s);
  saveSettings(out, s.settings);
  saveRest(out, s);
}

std::optional<Snapshot> loadSnapshot(CacheIn& in) {
  Snapshot s;
  s.pickle_protocol = static_cast<int>(in.u64());
  const std::uint64_t compression = in.u64();
  if (compression > static_cast<std::uint8_t>(Compression::kZstd)) return std::nullopt;
  s.compression = static_cast<Compression>(compression);
  s.file_bytes = in.u64();
  s.pickle_bytes = in.u64();
  if (!loadTables(in, s)) return std::nullopt;
  const std::uint64_t devices = in.u64();
  if (!in.fits(devices, 24)) return std::nullopt;
  s.devices.resize(devices);
  for (DeviceTrace& d : s.devices) {
    d.device = static_cast<std::int64_t>(in.u64());
    if (!loadPods(in, d.events) || !d.times.load(in)) return std::nullopt;
  }
  if (!loadSegments(in, s) || !loadSettings(in, s.settings) || !loadRest(in, s) || !in.finish() || !idsInRange(s))
    return std::nullopt;
  return s;
}

}  // namespace reservoir::traces::detail
