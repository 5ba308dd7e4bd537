#include "reservoir/simulator/stats.h"

namespace reservoir::sim {
namespace {

void putStat(std::map<std::string, std::int64_t>& out, const std::string& name, const Stat& s) {
  out[name + ".current"] = s.current;
  out[name + ".peak"] = s.peak;
  out[name + ".allocated"] = s.allocated;
  out[name + ".freed"] = s.freed;
}

void putArray(std::map<std::string, std::int64_t>& out, const std::string& name, const StatArray& a) {
  putStat(out, name + ".all", a[kAggregate]);
  putStat(out, name + ".small_pool", a[kSmallPool]);
  putStat(out, name + ".large_pool", a[kLargePool]);
}

constexpr StatArray DeviceStats::*kArrays[] = {&DeviceStats::allocation,      &DeviceStats::segment,
                                               &DeviceStats::active,          &DeviceStats::inactive_split,
                                               &DeviceStats::allocated_bytes, &DeviceStats::reserved_bytes,
                                               &DeviceStats::active_bytes,    &DeviceStats::inactive_split_bytes,
                                               &DeviceStats::requested_bytes};
constexpr Stat DeviceStats::*kSingles[] = {&DeviceStats::oversize_allocations, &DeviceStats::oversize_segments};
constexpr std::int64_t DeviceStats::*kCounts[] = {&DeviceStats::num_alloc_retries, &DeviceStats::num_ooms,
                                                  &DeviceStats::num_sync_all_streams, &DeviceStats::num_device_alloc,
                                                  &DeviceStats::num_device_free};

template <typename F>
void forEachArray(DeviceStats& s, F f) {
  for (auto a : kArrays)
    for (Stat& st : s.*a) f(st);
}

// Each statistic of `s` (the arrays' and the oversize ones) with the same one of `o`: f(Stat&, const Stat&).
template <typename S, typename F>
void forEachStatPair(S& s, const DeviceStats& o, F f) {
  for (auto a : kArrays)
    for (std::size_t t = 0; t < kStatTypes; ++t) f((s.*a)[t], (o.*a)[t]);
  for (auto one : kSingles) f(s.*one, o.*one);
}

// The statistics with a peak, in the order of peakStatKeys(): f(name, pool suffix, stat).
template <typename Stats, typename F>
void forEachPeakStat(Stats& s, F f) {
  const std::pair<const char*, decltype(&s.allocation)> arrays[] = {{"allocation", &s.allocation},
                                                                    {"segment", &s.segment},
                                                                    {"active", &s.active},
                                                                    {"inactive_split", &s.inactive_split},
                                                                    {"allocated_bytes", &s.allocated_bytes},
                                                                    {"reserved_bytes", &s.reserved_bytes},
                                                                    {"active_bytes", &s.active_bytes},
                                                                    {"inactive_split_bytes", &s.inactive_split_bytes},
                                                                    {"requested_bytes", &s.requested_bytes}};
  for (const auto& [name, a] : arrays) {
    f(name, ".all", (*a)[kAggregate]);
    f(name, ".small_pool", (*a)[kSmallPool]);
    f(name, ".large_pool", (*a)[kLargePool]);
  }
  f("oversize_allocations", "", s.oversize_allocations);
  f("oversize_segments", "", s.oversize_segments);
}

}  // namespace

void DeviceStats::resetPeaks() {
  forEachArray(*this, [](Stat& s) { s.resetPeak(); });
  oversize_allocations.resetPeak();
  oversize_segments.resetPeak();
}

void DeviceStats::sumPools() {
  for (StatArray* a : {&allocation, &segment, &active, &inactive_split, &allocated_bytes, &reserved_bytes,
                       &active_bytes, &inactive_split_bytes, &requested_bytes}) {
    const Stat& small = (*a)[kSmallPool];
    const Stat& large = (*a)[kLargePool];
    Stat& all = (*a)[kAggregate];
    all.allocated = saturatingAdd(small.allocated, large.allocated);
    all.freed = saturatingAdd(small.freed, large.freed);
  }
}

void DeviceStats::resetAccumulated() {
  forEachArray(*this, [](Stat& s) { s.resetAccumulated(); });
  oversize_allocations.resetAccumulated();
  oversize_segments.resetAccumulated();
  num_alloc_retries = num_ooms = num_sync_all_streams = num_device_alloc = num_device_free = 0;
}

bool DeviceStats::sameCurrentValues(const DeviceStats& earlier) const {
  bool same = max_split_size == earlier.max_split_size;
  forEachStatPair(*this, earlier, [&](const Stat& a, const Stat& b) { same = same && a.current == b.current; });
  return same;
}

DeviceStats DeviceStats::growthSince(const DeviceStats& earlier) const {
  DeviceStats g;
  forEachStatPair(g, *this, [](Stat& out, const Stat& now) { out = Stat{0, 0, now.allocated, now.freed}; });
  forEachStatPair(g, earlier, [](Stat& out, const Stat& then) {
    out.allocated -= then.allocated;
    out.freed -= then.freed;
  });
  for (auto c : kCounts) g.*c = this->*c - earlier.*c;
  return g;
}

void DeviceStats::grow(const DeviceStats& growth, std::uint64_t times) {
  forEachStatPair(*this, growth, [&](Stat& s, const Stat& step) {
    s.allocated = saturatingAdd(s.allocated, saturatingTimes(step.allocated, times));
    s.freed = saturatingAdd(s.freed, saturatingTimes(step.freed, times));
  });
  for (auto c : kCounts) this->*c = saturatingAdd(this->*c, saturatingTimes(growth.*c, times));
}

std::map<std::string, std::int64_t> memoryStatsMap(const DeviceStats& s) {
  std::map<std::string, std::int64_t> out;
  putArray(out, "allocation", s.allocation);
  putArray(out, "segment", s.segment);
  putArray(out, "active", s.active);
  putArray(out, "inactive_split", s.inactive_split);
  putArray(out, "allocated_bytes", s.allocated_bytes);
  putArray(out, "reserved_bytes", s.reserved_bytes);
  putArray(out, "active_bytes", s.active_bytes);
  putArray(out, "inactive_split_bytes", s.inactive_split_bytes);
  putArray(out, "requested_bytes", s.requested_bytes);
  putStat(out, "oversize_allocations", s.oversize_allocations);
  putStat(out, "oversize_segments", s.oversize_segments);
  out["num_alloc_retries"] = s.num_alloc_retries;
  out["num_ooms"] = s.num_ooms;
  out["num_sync_all_streams"] = s.num_sync_all_streams;
  out["num_device_alloc"] = s.num_device_alloc;
  out["num_device_free"] = s.num_device_free;
  out["max_split_size"] = s.max_split_size;
  return out;
}

const std::array<std::string, kPeakStats>& peakStatKeys() {
  static const std::array<std::string, kPeakStats> keys = [] {
    std::array<std::string, kPeakStats> out;
    std::size_t i = 0;
    const DeviceStats none;
    forEachPeakStat(
        none, [&](const char* name, const char* pool, const Stat&) { out[i++] = std::string(name) + pool + ".peak"; });
    return out;
  }();
  return keys;
}

PeakValues peaksOf(const DeviceStats& s) {
  PeakValues out{};
  std::size_t i = 0;
  forEachPeakStat(s, [&](const char*, const char*, const Stat& stat) { out[i++] = stat.peak; });
  return out;
}

}  // namespace reservoir::sim
