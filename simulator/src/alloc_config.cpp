#include "reservoir/simulator/alloc_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

namespace reservoir::sim {
namespace {

bool isPow2(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }
std::size_t log2Floor(std::uint64_t v) { return 63u - static_cast<std::size_t>(std::countl_zero(v)); }

// torch's ConfigTokenizer plus its error texts. Every accessor that would fail in torch
// sets `error` (first one wins) and returns a harmless value so parsing can stop cleanly.
class Tokens {
 public:
  explicit Tokens(std::string_view env) {
    std::string buffer;
    for (char ch : env) {
      if (ch == ',' || ch == ':' || ch == '[' || ch == ']') {
        if (!buffer.empty()) tokens_.push_back(std::move(buffer));
        buffer.clear();
        tokens_.emplace_back(1, ch);
      } else if (!std::isspace(static_cast<unsigned char>(ch))) {
        buffer += ch;
      }
    }
    if (!buffer.empty()) tokens_.push_back(std::move(buffer));
  }
  [[nodiscard]] std::size_t size() const { return tokens_.size(); }
  const std::string& at(std::size_t i) {
    static const std::string kEmpty;
    if (i >= tokens_.size()) {
      fail("Index out of bounds in ConfigTokenizer (the value after a key is missing)");
      return kEmpty;
    }
    return tokens_[i];
  }
  // torch only checks that the index exists, not the token itself.
  void expect(std::size_t i) { (void)at(i); }
  std::uint64_t toSizeT(std::size_t i) {
    const std::string& t = at(i);
    if (!error.ok()) return 0;
    // std::stoull: optional whitespace and sign, then digits; a leading '-' wraps around.
    const char* p = t.c_str();
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(p, &end, 10);
    // torch throws std::invalid_argument / std::out_of_range (from stoull); the same failure in words.
    if (end == p)
      fail(fmt::format("'{}' is not a whole number (torch refuses it too)", t));
    else if (errno == ERANGE)
      fail(fmt::format("'{}' is too large: more than 2^64 - 1 (torch refuses it too)", t));
    return v;
  }
  double toDouble(std::size_t i) {
    const std::string& t = at(i);
    if (!error.ok()) return 0;
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    if (end == t.c_str()) fail(fmt::format("'{}' is not a number (torch refuses it too)", t));
    return v;
  }
  bool toBool(std::size_t i) {
    const std::string& t = at(i);
    if (!error.ok()) return false;
    if (t == "True") return true;
    if (t == "False") return false;
    fail(fmt::format("Expected 'True' or 'False' at index {} in ConfigTokenizer but got '{}'", i, t));
    return false;
  }
  std::size_t skipKey(std::size_t i) {
    expect(++i);
    ++i;
    if (at(i) != "[") return i;
    while (++i < tokens_.size() && tokens_[i] != "]") {
    }
    if (i >= tokens_.size()) fail("Expected closing bracket ']' in ConfigTokenizer but reached end of config");
    return i;
  }
  void fail(std::string message) {
    if (error.ok()) error = Status::error(std::move(message));
  }
  Status error;

 private:
  std::vector<std::string> tokens_;
};

std::size_t parseMb(Tokens& t, std::size_t i, const char* name, ByteCount min_bytes, ByteCount* out) {
  t.expect(++i);
  const std::uint64_t v = t.toSizeT(++i);
  if (!t.error.ok()) return i;
  const std::uint64_t min_mb = min_bytes / kMiB;
  if (v < min_mb) {
    t.fail(fmt::format("CachingAllocator option {} too small, must be >= {}", name, min_mb));
    return i;
  }
  *out = std::min<std::uint64_t>(v, std::numeric_limits<std::uint64_t>::max() / kMiB) * kMiB;
  return i;
}

std::size_t parseRoundup(Tokens& t, std::size_t i, AllocatorConfig& c) {
  t.expect(++i);
  auto& table = c.roundup_power2_divisions;
  if (t.at(++i) == "[") {
    bool first = true;
    std::size_t last_index = 0;
    while (++i < t.size() && t.at(i) != "]") {
      const std::size_t value_index = i;
      t.expect(++i);
      const std::uint64_t value = t.toSizeT(++i);
      if (!t.error.ok()) return i;
      if (value != 0 && !isPow2(value)) {
        t.fail("For roundups, the divisions has to be power of 2 or 0 to disable roundup ");
        return i;
      }
      if (t.at(value_index) == ">") {
        std::fill(table.begin() + static_cast<std::ptrdiff_t>(std::min(last_index + 1, table.size())), table.end(),
                  value);
      } else {
        const std::uint64_t boundary = t.toSizeT(value_index);
        if (!t.error.ok()) return i;
        if (!isPow2(boundary)) {
          t.fail("For roundups, the intervals have to be power of 2 ");
          return i;
        }
        const std::size_t index = std::min(log2Floor(boundary), table.size() - 1);
        if (first) {
          std::fill(table.begin(), table.begin() + static_cast<std::ptrdiff_t>(index), value);
          first = false;
        }
        table[index] = value;
        last_index = index;
      }
      if (i + 1 >= t.size()) {
        t.fail("Index out of bounds in ConfigTokenizer (missing ']')");
        return i;
      }
      if (t.at(i + 1) != "]") t.expect(++i);
    }
    if (i >= t.size()) t.fail("Expected closing bracket ']' in ConfigTokenizer but reached end of config");
  } else {
    const std::uint64_t value = t.toSizeT(i);
    if (!t.error.ok()) return i;
    if (!isPow2(value)) {
      t.fail("For roundups, the divisions has to be power of 2 ");
      return i;
    }
    table.fill(value);
  }
  return i;
}

// large_segment_size_mb: > 10 (kMinLargeAlloc in MiB), capped like the other MiB sizes.
std::size_t parseLargeSegment(Tokens& t, std::size_t i, AllocatorConfig& c) {
  t.expect(++i);
  const std::uint64_t v = t.toSizeT(++i);
  if (t.error.ok() && v <= kMinLargeAlloc / kMiB)
    t.fail(fmt::format("CachingAllocator option large_segment_size_mb must be > {} MB", kMinLargeAlloc / kMiB));
  if (t.error.ok())
    c.large_segment_size = std::min<std::uint64_t>(v, std::numeric_limits<std::uint64_t>::max() / kMiB) * kMiB;
  return i;
}

// A reserve value: "<fraction>" or "<n>G" / "<n>g"; anything else (not a whole finite
// positive number) is torch's non-fatal warning and keeps the default.
std::optional<ReserveSpec> parseReserveSpec(const std::string& token, AllocatorConfig& c) {
  const bool gib = !token.empty() && (token.back() == 'G' || token.back() == 'g');
  const std::string num = gib ? token.substr(0, token.size() - 1) : token;
  char* end = nullptr;
  const double v = num.empty() ? 0.0 : std::strtod(num.c_str(), &end);
  const bool whole = !num.empty() && end == num.c_str() + num.size();
  if (!whole || !std::isfinite(v) || !(v > 0.0)) {
    c.parse_warnings.push_back(fmt::format(
        "Ignoring invalid expandable-segment reserve value '{}' (expected a positive, finite fraction like 0.5 or "
        "an absolute size like 40G); using default.",
        token));
    return std::nullopt;
  }
  return ReserveSpec{!gib, v};
}

std::size_t parseReserve(Tokens& t, std::size_t i, AllocatorConfig& c) {
  t.expect(++i);
  const std::string& v = t.at(++i);
  if (!t.error.ok()) return i;
  if (auto spec = parseReserveSpec(v, c)) c.expandable_segments_reserve = *spec;
  return i;
}

// expandable_segments_reserve_by_class:[name:value,...]: the list replaces the previous one;
// a bad entry is skipped with a warning, the others apply.
std::size_t parseReserveByClass(Tokens& t, std::size_t i, AllocatorConfig& c) {
  t.expect(++i);
  if (t.at(++i) != "[") {
    if (t.error.ok()) t.fail("Expected '[' after expandable_segments_reserve_by_class in ConfigTokenizer");
    return i;
  }
  std::vector<std::pair<std::string, ReserveSpec>> parsed;
  while (t.error.ok() && t.at(i + 1) != "]") {
    const std::string name = t.at(++i);
    t.expect(++i);
    const std::string value = t.at(++i);
    if (!t.error.ok()) return i;
    if (auto spec = parseReserveSpec(value, c)) {
      auto it = std::find_if(parsed.begin(), parsed.end(), [&](const auto& e) { return e.first == name; });
      if (it != parsed.end())
        it->second = *spec;
      else
        parsed.emplace_back(name, *spec);
    }
    if (t.at(i + 1) == ",") ++i;
  }
  if (!t.error.ok()) return i;
  c.expandable_segments_reserve_by_class = std::move(parsed);
  return i + 1;  // the ']'
}

// Keys the accelerator-wide pass parses; the CUDA pass owns the others.
std::size_t parseCommonKey(Tokens& t, std::size_t i, AllocatorConfig& c, bool* known) {
  const std::string key = t.at(i);
  *known = true;
  if (key == "max_split_size_mb") return parseMb(t, i, "max_split_size_mb", c.large_segment_size, &c.max_split_size);
  if (key == "max_non_split_rounding_mb")
    return parseMb(t, i, "max_non_split_rounding_mb", c.large_segment_size, &c.max_non_split_rounding_size);
  if (key == "garbage_collection_threshold") {
    t.expect(++i);
    const double v = t.toDouble(++i);
    if (t.error.ok() && !(v > 0 && v < 1.0)) t.fail("garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
    if (t.error.ok()) c.garbage_collection_threshold = v;
    return i;
  }
  if (key == "roundup_power2_divisions") return parseRoundup(t, i, c);
  if (key == "expandable_segments") {
    t.expect(++i);
    const bool v = t.toBool(++i);
    if (t.error.ok()) c.expandable_segments = v;
    return i;
  }
  if (key == "large_segment_size_mb") return t.skipKey(i);  // read by the first pass
  if (key == "per_process_memory_fraction") {
    t.expect(++i);
    const double v = t.toDouble(++i);
    if (t.error.ok() && !(v >= 0 && v <= 1)) t.fail(fmt::format("invalid fraction:{}. Please set within [0, 1].", v));
    if (t.error.ok()) c.per_process_memory_fraction = v;
    return i;
  }
  if (key == "pinned_use_background_threads") {
    t.expect(++i);
    (void)t.toBool(++i);
    return i;
  }
  *known = false;
  return i;
}

bool isCudaKey(const std::string& key) {
  return key == "backend" || key == "release_lock_on_cudamalloc" || key == "release_lock_on_hipmalloc" ||
         key == "pinned_use_cuda_host_register" || key == "pinned_use_hip_host_register" ||
         key == "pinned_num_register_threads" || key == "pinned_reserve_segment_size_mb" ||
         key == "graph_capture_record_stream_reuse" || key == "pinned_free_catch_all" ||
         key == "throw_on_cudamalloc_oom" || key == "expandable_segments_reserve" ||
         key == "expandable_segments_reserve_by_class";
}

std::size_t parseBoolKey(Tokens& t, std::size_t i, bool* out) {
  t.expect(++i);
  const bool v = t.toBool(++i);
  if (t.error.ok() && out) *out = v;
  return i;
}

std::size_t parseCudaKey(Tokens& t, std::size_t i, AllocatorConfig& c) {
  const std::string key = t.at(i);
  if (key == "backend") {
    t.expect(++i);
    const std::string v = t.at(++i);
    if (!t.error.ok()) return i;
    if (v != "native" && v != "cudaMallocAsync")
      t.fail("Unknown allocator backend, options are native and cudaMallocAsync");
    else if (v == "cudaMallocAsync")
      t.fail("backend:cudaMallocAsync selects CUDA's stream-ordered allocator, which Reservoir does not model");
    return i;
  }
  if (key == "release_lock_on_cudamalloc" || key == "release_lock_on_hipmalloc") {
    t.expect(++i);
    const bool v = t.toBool(++i);
    if (t.error.ok()) c.release_lock_on_cudamalloc = v;
    return i;
  }
  if (key == "graph_capture_record_stream_reuse") return parseBoolKey(t, i, &c.graph_capture_record_stream_reuse);
  if (key == "throw_on_cudamalloc_oom") return parseBoolKey(t, i, &c.throw_on_cudamalloc_oom);
  if (key == "pinned_free_catch_all") return parseBoolKey(t, i, nullptr);  // host allocator only
  if (key == "expandable_segments_reserve") return parseReserve(t, i, c);
  if (key == "expandable_segments_reserve_by_class") return parseReserveByClass(t, i, c);
  if (key == "pinned_num_register_threads") {
    t.expect(++i);
    const std::uint64_t v = t.toSizeT(++i);
    if (t.error.ok() && !isPow2(v)) t.fail(fmt::format("Number of register threads has to be power of 2, got {}", v));
    if (t.error.ok() && v > kPinnedMaxRegisterThreads)
      t.fail(fmt::format("Number of register threads should be less than or equal to {}, got {}",
                         kPinnedMaxRegisterThreads, v));
    return i;
  }
  if (key == "pinned_reserve_segment_size_mb") {
    t.expect(++i);
    const std::uint64_t v = t.toSizeT(++i);
    if (t.error.ok() && v == 0) t.fail("Pinned reserve segment size has to be greater than 0");
    return i;
  }
  t.expect(++i);  // pinned_use_*_host_register
  (void)t.toBool(++i);
  return i;
}

}  // namespace

Status applyAllocConf(AllocatorConfig& config, std::string_view conf, UnknownKeys unknown) {
  config.max_split_size = kUnlimited;
  config.roundup_power2_divisions.fill(0);
  config.garbage_collection_threshold = 0;
  config.last_settings = std::string(conf);
  Tokens t(conf);
  // Pass 0: large_segment_size_mb first, because the split and rounding minimums follow it
  // (so "max_split_size_mb:30,large_segment_size_mb:40" fails: 30 < 40); every parse then
  // resets max_non_split_rounding to the large segment size.
  for (std::size_t i = 0; i < t.size() && t.error.ok(); ++i)
    if (t.at(i) == "large_segment_size_mb") i = parseLargeSegment(t, i, config);
  if (!t.error.ok()) return t.error;
  config.max_non_split_rounding_size = config.large_segment_size;
  // Pass 1: the accelerator-wide keys; an unknown key is an error (or skipped).
  for (std::size_t i = 0; i < t.size() && t.error.ok(); i++) {
    bool known = false;
    const std::string key = t.at(i);
    i = parseCommonKey(t, i, config, &known);
    if (!known) {
      if (!isCudaKey(key)) {
        if (unknown == UnknownKeys::kError) {
          t.fail(fmt::format("Unrecognized key '{}' in Accelerator allocator config.", key));
          break;
        }
        if (std::find(config.ignored_keys.begin(), config.ignored_keys.end(), key) == config.ignored_keys.end())
          config.ignored_keys.push_back(key);
      }
      i = t.skipKey(i);
    }
    if (t.error.ok() && i + 1 < t.size()) t.expect(++i);
  }
  // Pass 2: the CUDA allocator's own keys.
  for (std::size_t i = 0; i < t.size() && t.error.ok(); i++) {
    const std::string key = t.at(i);
    i = isCudaKey(key) ? parseCudaKey(t, i, config) : t.skipKey(i);
    if (t.error.ok() && i + 1 < t.size()) t.expect(++i);
  }
  return t.error;
}

Expected<AllocatorConfig> parseAllocConf(std::string_view conf) {
  AllocatorConfig config;
  if (Status st = applyAllocConf(config, conf); !st.ok()) return st;
  return config;
}

Expected<AllocatorConfig> configFromRecorded(const traces::RecordedSettings& recorded) {
  AllocatorConfig config;
  if (Status st = applyAllocConf(config, recorded.alloc_conf, UnknownKeys::kSkip); !st.ok())
    return Status::error("recorded PYTORCH_CUDA_ALLOC_CONF '" + recorded.alloc_conf + "': " + st.message());
  if (!recorded.present) return config;
  config.expandable_segments = recorded.expandable_segments;
  config.max_split_size = recorded.max_split_size < 0 && recorded.max_split_size != -1048576
                              ? kUnlimited
                              : static_cast<ByteCount>(recorded.max_split_size);
  // The file's values, checked as torch's parser checks them (a damaged or hand-made file can
  // hold anything: an infinite threshold made the model convert inf to a size, found by fuzzing).
  const double gc = recorded.garbage_collection_threshold;
  if (gc != 0 && !(gc > 0 && gc < 1.0))
    return Status::error(fmt::format("recorded garbage_collection_threshold {} is outside (0, 1)", gc));
  config.garbage_collection_threshold = gc;
  for (std::size_t i = 0; i < kRoundupIntervals; ++i) {
    const std::uint64_t d = recorded.roundup_power2_divisions[i];
    if ((d & (d - 1)) != 0)
      return Status::error(fmt::format("recorded roundup_power2_divisions {} is not a power of 2", d));
    config.roundup_power2_divisions[i] = d;
  }
  if (recorded.release_lock_on_cudamalloc) config.release_lock_on_cudamalloc = *recorded.release_lock_on_cudamalloc;
  if (recorded.graph_capture_record_stream_reuse)
    config.graph_capture_record_stream_reuse = *recorded.graph_capture_record_stream_reuse;
  return config;
}

ByteCount ReserveSpec::resolve(ByteCount total) const {
  const double bytes =
      is_fraction ? value * static_cast<double>(total) : value * static_cast<double>(ByteCount{1} << 30);
  if (bytes >= static_cast<double>(std::numeric_limits<ByteCount>::max())) return std::numeric_limits<ByteCount>::max();
  return static_cast<ByteCount>(bytes);
}

ByteCount AllocatorConfig::expandableReserve(ByteCount total) const {
  const ByteCount full = total + total / 8;
  return expandable_segments_reserve ? std::min(expandable_segments_reserve->resolve(total), full) : full;
}

ByteCount AllocatorConfig::divisionsFor(ByteCount size) const {
  const std::size_t log_size = log2Floor(size);
  const std::size_t start = 20;  // 1 MiB
  std::size_t index = log_size > start ? log_size - start : 0;
  index = std::min(index, kRoundupIntervals - 1);
  return roundup_power2_divisions[index];
}

ByteCount AllocatorConfig::roundSize(ByteCount size) const {
  if (size < kMinBlockSize) return kMinBlockSize;
  const ByteCount divisions = divisionsFor(size);
  if (divisions > 1 && size > kMinBlockSize * divisions) {
    if (isPow2(size)) return size;
    const ByteCount floor = ByteCount{1} << log2Floor(size);
    const ByteCount step = floor >> log2Floor(divisions);
    if (step == 0) return floor << 1;
    const ByteCount rounded_floor = size & ~(step - 1);
    return rounded_floor == size ? size : rounded_floor + step;
  }
  return kMinBlockSize * ((size + kMinBlockSize - 1) / kMinBlockSize);
}

ByteCount AllocatorConfig::allocationSize(ByteCount rounded) const {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return large_segment_size;
  return kRoundLarge * ((rounded + kRoundLarge - 1) / kRoundLarge);
}

std::string roundupTableText(const AllocatorConfig& config) {
  std::string out;
  for (std::size_t i = 0; i < kRoundupIntervals; ++i)
    out += fmt::format("{}{}:{}", i ? "," : "", ByteCount{1} << i, config.roundup_power2_divisions[i]);
  return out;
}

std::string AllocatorConfig::toConfString() const {
  std::vector<std::string> parts;
  if (expandable_segments) parts.emplace_back("expandable_segments:True");
  if (maxSplitSet()) parts.push_back(fmt::format("max_split_size_mb:{}", max_split_size / kMiB));
  if (garbage_collection_threshold > 0)
    parts.push_back(fmt::format("garbage_collection_threshold:{}", garbage_collection_threshold));
  if (large_segment_size != kDefaultLargeSegment)
    parts.push_back(fmt::format("large_segment_size_mb:{}", large_segment_size / kMiB));
  if (max_non_split_rounding_size != large_segment_size)
    parts.push_back(fmt::format("max_non_split_rounding_mb:{}", max_non_split_rounding_size / kMiB));
  auto spec_text = [](const ReserveSpec& r) { return fmt::format("{}{}", r.value, r.is_fraction ? "" : "G"); };
  if (expandable_segments_reserve)
    parts.push_back("expandable_segments_reserve:" + spec_text(*expandable_segments_reserve));
  if (!expandable_segments_reserve_by_class.empty()) {
    std::string list;
    for (const auto& [name, spec] : expandable_segments_reserve_by_class)
      list += (list.empty() ? "" : ",") + name + ":" + spec_text(spec);
    parts.push_back("expandable_segments_reserve_by_class:[" + list + "]");
  }
  if (throw_on_cudamalloc_oom) parts.emplace_back("throw_on_cudamalloc_oom:True");
  bool any = false;
  for (auto d : roundup_power2_divisions) any = any || d != 0;
  if (any) {
    std::string list;
    for (std::size_t i = 0; i < kRoundupIntervals; ++i)
      list += fmt::format("{}{}:{}", i ? "," : "", ByteCount{1} << i, roundup_power2_divisions[i]);
    parts.push_back("roundup_power2_divisions:[" + list + "]");
  }
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "," : "") + parts[i];
  return out;
}

}  // namespace reservoir::sim
