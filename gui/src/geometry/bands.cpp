#include "geometry/bands.h"

#include <algorithm>
#include <cmath>

#include "geometry/lod.h"

namespace reservoir::gui {
namespace {

// The bands alive at `event`, in allocation order.
std::vector<std::uint32_t> liveAt(const LifetimeView& lt, std::uint32_t event, std::int64_t threshold) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t a = 0; a < lt.size.size(); ++a)
    if (lt.begin[a] <= event && event < lt.end[a] && static_cast<std::int64_t>(lt.size[a]) >= threshold)
      out.push_back(a);
  return out;
}

int floorLog2(std::uint64_t v) { return v == 0 ? -1 : 63 - __builtin_clzll(v); }

void applyEvent(const LifetimeView& lt, std::uint32_t e, std::int64_t threshold, std::vector<std::uint32_t>& live) {
  const std::uint32_t a = lt.event_allocation[e];
  if (a == kNoAllocation || static_cast<std::int64_t>(lt.size[a]) < threshold) return;
  if (lt.begin[a] == e && e < lt.end[a]) {
    live.insert(std::upper_bound(live.begin(), live.end(), a), a);
  } else if (lt.end[a] == e) {
    const auto it = std::lower_bound(live.begin(), live.end(), a);
    if (it != live.end() && *it == a) live.erase(it);
  }
}

void emitColumn(const LifetimeView& lt, std::uint32_t event, const std::vector<std::uint32_t>& live, BandColumns& out) {
  std::int64_t big = 0;
  for (auto a : live) big += static_cast<std::int64_t>(lt.size[a]);
  const std::int64_t small = lt.live[event] - big;
  std::int64_t y = 0;
  if (small > 0) {
    out.spans.push_back(BandSpan{0, small, kMergedBand});
    y = small;
  }
  for (auto a : live) {
    const auto h = static_cast<std::int64_t>(lt.size[a]);
    out.spans.push_back(BandSpan{y, y + h, a});
    y += h;
  }
}

}  // namespace

BandColumns computeBands(const LifetimeView& lt, std::span<const std::uint32_t> rep, std::int64_t threshold) {
  BandColumns out;
  out.threshold = std::max<std::int64_t>(threshold, 1);
  out.offsets.reserve(rep.size() + 1);
  out.offsets.push_back(0);
  out.event.assign(rep.begin(), rep.end());
  std::vector<std::uint32_t> live;
  std::uint32_t at = ColumnRange::kNone;  // the event `live` is for
  for (std::uint32_t e : rep) {
    if (e != ColumnRange::kNone && e < lt.live.size()) {
      // Sweep forward; start afresh when the jump is longer than a scan of all allocations.
      if (at == ColumnRange::kNone || e < at || e - at > lt.size.size()) {
        live = liveAt(lt, e, out.threshold);
      } else if (!lt.event_size_class.empty()) {
        // An allocation of at least `threshold` bytes has a size class of at least this.
        const auto min_class = static_cast<std::uint8_t>(floorLog2(static_cast<std::uint64_t>(out.threshold)) + 1);
        const std::uint8_t* cls = lt.event_size_class.data();
        for (std::uint32_t k = at + 1; k <= e; ++k)
          if (cls[k] >= min_class) applyEvent(lt, k, out.threshold, live);
      } else {
        for (std::uint32_t k = at + 1; k <= e; ++k) applyEvent(lt, k, out.threshold, live);
      }
      at = e;
      emitColumn(lt, e, live, out);
    }
    out.offsets.push_back(static_cast<std::uint32_t>(out.spans.size()));
  }
  return out;
}

std::vector<std::uint8_t> eventSizeClasses(std::span<const std::uint32_t> event_allocation,
                                           std::span<const std::uint64_t> size) {
  std::vector<std::uint8_t> out(event_allocation.size(), 0);
  for (std::size_t e = 0; e < out.size(); ++e) {
    const auto a = event_allocation[e];
    if (a != kNoAllocation && a < size.size()) out[e] = static_cast<std::uint8_t>(floorLog2(size[a]) + 1);
  }
  return out;
}

std::vector<std::uint32_t> representativeEvents(std::span<const ColumnEnvelope> env,
                                                std::span<const ColumnRange> columns) {
  std::vector<std::uint32_t> out(columns.size(), ColumnRange::kNone);
  for (std::size_t c = 0; c < columns.size() && c < env.size(); ++c) {
    if (!env[c].valid) continue;
    out[c] = columns[c].empty() ? columns[c].carry : env[c].argmax;
  }
  // Keep them nondecreasing (the sweep only goes forward).
  for (std::size_t c = 1; c < out.size(); ++c)
    if (out[c] != ColumnRange::kNone && out[c - 1] != ColumnRange::kNone && out[c] < out[c - 1]) out[c] = out[c - 1];
  return out;
}

const BandSpan* hitBand(const BandColumns& bands, std::size_t c, std::int64_t bytes) {
  if (c + 1 >= bands.offsets.size()) return nullptr;
  const auto col = bands.column(c);
  const auto it =
      std::upper_bound(col.begin(), col.end(), bytes, [](std::int64_t b, const BandSpan& s) { return b < s.hi; });
  if (it == col.end() || bytes < it->lo) return nullptr;
  return &*it;
}

void rasterizeBands(const BandColumns& bands, const Axis& y, std::uint32_t* pixels, int width, int height, int stride,
                    BandColour colour, const void* context) {
  const std::size_t cols =
      std::min<std::size_t>(static_cast<std::size_t>(std::max(width, 0)), bands.offsets.size() - 1);
  for (std::size_t c = 0; c < cols; ++c) {
    for (const BandSpan& s : bands.column(c)) {
      const int top = std::clamp(static_cast<int>(y.toPixel(static_cast<double>(s.hi)) + 0.5), 0, height);
      const int bottom = std::clamp(static_cast<int>(y.toPixel(static_cast<double>(s.lo)) + 0.5), 0, height);
      if (bottom <= top) continue;
      const std::uint32_t fill = colour(s.allocation, context);
      // A darker top edge separates bands that are tall enough to show it.
      const std::uint32_t edge =
          bottom - top >= 4 ? (((fill >> 1) & 0x007f7f7fu) + ((fill >> 2) & 0x003f3f3fu)) | 0xff000000u : fill;
      std::uint32_t* px = pixels + static_cast<std::ptrdiff_t>(top) * stride + static_cast<std::ptrdiff_t>(c);
      *px = edge;
      for (int row = top + 1; row < bottom; ++row) {
        px += stride;
        *px = fill;
      }
    }
  }
}

std::uint32_t paletteColour(std::uint64_t key) {
  // Hues a golden angle apart: any few consecutive keys are far apart on the colour wheel; the
  // saturation and value alternate too (vivid and light, paler and darker), which keeps keys
  // 2 and 3 apart, whose hues come round closer (85 and 52 degrees).
  constexpr double kGoldenAngle = 137.50776405003785;
  const double hue = std::fmod(static_cast<double>(key % 100000) * kGoldenAngle, 360.0);
  const double s = key % 2 ? 0.35 : 0.60, v = key % 2 ? 0.78 : 0.93;
  const double c = v * s, hp = hue / 60.0, x = c * (1.0 - std::abs(std::fmod(hp, 2.0) - 1.0)), m = v - c;
  double r = 0, g = 0, b = 0;
  if (hp < 1) {
    r = c;
    g = x;
  } else if (hp < 2) {
    r = x;
    g = c;
  } else if (hp < 3) {
    g = c;
    b = x;
  } else if (hp < 4) {
    g = x;
    b = c;
  } else if (hp < 5) {
    r = x;
    b = c;
  } else {
    r = c;
    b = x;
  }
  auto byte = [](double f) { return static_cast<std::uint32_t>(std::lround(std::clamp(f, 0.0, 1.0) * 255.0)); };
  return 0xff000000u | (byte(r + m) << 16) | (byte(g + m) << 8) | byte(b + m);
}

std::vector<std::uint32_t> colourRanks(std::span<const std::uint32_t> key_of_item, std::size_t keys) {
  constexpr std::uint32_t kUnseen = 0xffffffffu;
  std::vector<std::uint32_t> rank(keys, kUnseen);
  std::uint32_t next = 0;
  for (const std::uint32_t k : key_of_item)
    if (k < keys && rank[k] == kUnseen) rank[k] = next++;
  for (auto& r : rank)
    if (r == kUnseen) r = next++;
  return rank;
}

std::vector<std::uint32_t> dominantColours(const BandColumns& bands, BandColour colour, const void* context,
                                           std::size_t max) {
  std::vector<std::pair<std::uint32_t, std::int64_t>> total;  // colour, bytes summed over columns
  for (const BandSpan& s : bands.spans) {
    if (s.allocation == kMergedBand) continue;
    const std::uint32_t c = colour(s.allocation, context);
    auto it = std::find_if(total.begin(), total.end(), [&](const auto& t) { return t.first == c; });
    if (it == total.end()) {
      total.emplace_back(c, 0);
      it = total.end() - 1;
    }
    it->second += s.hi - s.lo;
  }
  std::stable_sort(total.begin(), total.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < total.size() && i < max; ++i) out.push_back(total[i].first);
  return out;
}

}  // namespace reservoir::gui
