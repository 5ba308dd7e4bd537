#include "geometry/bands.h"

#include <algorithm>
#include <cmath>

#include "geometry/lod.h"

namespace reservoir::gui {
namespace {

int floorLog2(std::uint64_t v) { return v == 0 ? -1 : 63 - __builtin_clzll(v); }

// The blocks alive after one event, as the columns show them: those of at least `threshold`
// bytes one by one (in allocation order), the smaller ones of at least `floor` summed per
// stack, with the stacks whose sum reaches `threshold` listed by their first allocation.
class LiveBlocks {
 public:
  LiveBlocks(const LifetimeView& lt, std::int64_t threshold)
      : lt_(lt), threshold_(threshold), per_stack_(!lt.stack_first.empty()),
        floor_(per_stack_ ? stackFloor(threshold) : threshold) {}

  [[nodiscard]] std::int64_t floor() const { return floor_; }

  void scan(std::uint32_t event) {
    big_.clear();
    shown_.clear();
    if (per_stack_) {
      bytes_.assign(lt_.stack_first.size(), 0);
      blocks_.assign(lt_.stack_first.size(), 0);
    }
    for (std::uint32_t a = 0; a < lt_.count(); ++a)
      if (lt_.begin(a) <= event && event < lt_.end(a)) add(a);
  }

  void apply(std::uint32_t e) {
    const std::uint32_t a = lt_.allocationAt(e);
    if (a == kNoAllocation || size(a) < floor_) return;
    if (lt_.begin(a) == e && e < lt_.end(a)) {
      add(a);
    } else if (lt_.end(a) == e && lt_.begin(a) < e) {
      remove(a);
    }
  }

  // Event e's allocation starts (or ends) a block here: what apply() would find, known beforehand.
  void applyMarked(std::uint32_t e, bool starts) {
    const std::uint32_t a = lt_.allocationAt(e);
    if (size(a) < floor_) return;
    if (starts)
      add(a);
    else
      remove(a);
  }

  void emit(std::uint32_t event, BandColumns& out) const {
    std::int64_t counted = 0;
    for (auto a : big_) counted += size(a);
    for (auto f : shown_) counted += bytes_[lt_.stack(f).value()];
    const std::int64_t grey = (*lt_.live)[event] - counted;
    std::int64_t y = 0;
    if (grey > 0) {
      out.spans.push_back(BandSpan{0, grey, kMergedBand});
      y = grey;
    }
    for (auto f : shown_) {
      const auto s = lt_.stack(f).value();
      out.spans.push_back(BandSpan{y, y + bytes_[s], f, blocks_[s]});
      y += bytes_[s];
    }
    for (auto a : big_) {
      out.spans.push_back(BandSpan{y, y + size(a), a});
      y += size(a);
    }
  }

 private:
  [[nodiscard]] std::int64_t size(std::uint32_t a) const { return static_cast<std::int64_t>(lt_.size(a)); }

  // The stack whose sum `a` counts in (kNoAllocation: none, it stays grey).
  [[nodiscard]] std::uint32_t stackOf(std::uint32_t a) const {
    if (!per_stack_ || a >= lt_.count() || !lt_.stack(a).valid()) return kNoAllocation;
    const auto s = lt_.stack(a).value();
    return s < lt_.stack_first.size() && lt_.stack_first[s] != kNoAllocation ? s : kNoAllocation;
  }

  void add(std::uint32_t a) {
    if (size(a) >= threshold_) {
      big_.insert(std::upper_bound(big_.begin(), big_.end(), a), a);
    } else if (size(a) >= floor_) {
      if (const auto s = stackOf(a); s != kNoAllocation) change(s, size(a), 1);
    }
  }

  void remove(std::uint32_t a) {
    if (size(a) >= threshold_) {
      const auto it = std::lower_bound(big_.begin(), big_.end(), a);
      if (it != big_.end() && *it == a) big_.erase(it);
    } else if (size(a) >= floor_) {
      if (const auto s = stackOf(a); s != kNoAllocation && blocks_[s] > 0) change(s, -size(a), -1);
    }
  }

  void change(std::uint32_t s, std::int64_t bytes, int blocks) {
    const bool was = bytes_[s] >= threshold_;
    bytes_[s] += bytes;
    blocks_[s] = static_cast<std::uint32_t>(static_cast<int>(blocks_[s]) + blocks);
    const bool is = bytes_[s] >= threshold_;
    if (was == is) return;
    const std::uint32_t f = lt_.stack_first[s];
    const auto it = std::lower_bound(shown_.begin(), shown_.end(), f);
    if (is)
      shown_.insert(it, f);
    else if (it != shown_.end() && *it == f)
      shown_.erase(it);
  }

  const LifetimeView& lt_;
  std::int64_t threshold_;
  bool per_stack_;
  std::int64_t floor_;
  std::vector<std::uint32_t> big_;     // allocations of at least threshold_, sorted
  std::vector<std::int64_t> bytes_;    // per stack: its live blocks in [floor_, threshold_)
  std::vector<std::uint32_t> blocks_;  // per stack: how many
  std::vector<std::uint32_t> shown_;   // first allocations of the stacks with bytes_ >= threshold_, sorted
};

}  // namespace

std::int64_t stackFloor(std::int64_t threshold) { return std::max<std::int64_t>(threshold >> 12, 1); }

std::vector<std::uint32_t> firstAllocationOfStacks(std::span<const traces::Allocation> allocations,
                                                   std::size_t stacks) {
  std::vector<std::uint32_t> out(stacks, kNoAllocation);
  for (std::uint32_t a = 0; a < allocations.size(); ++a) {
    const StackId s = allocations[a].stack;
    if (s.valid() && s.value() < stacks && out[s.value()] == kNoAllocation) out[s.value()] = a;
  }
  return out;
}

namespace {

// The sweep behind computeBands and forEachBandColumn: the spans of each column are appended to
// out.spans, then `column_done(out)` is called (once per entry of `rep`, with or without spans).
template <typename ColumnDone>
void sweepBands(const LifetimeView& lt, std::span<const std::uint32_t> rep, std::int64_t threshold, BandColumns& out,
                ColumnDone column_done) {
  out.threshold = std::max<std::int64_t>(threshold, 1);
  LiveBlocks live(lt, out.threshold);
  out.stack_floor = live.floor();
  // An allocation the sweep must see has a size class of at least this.
  const auto min_class = static_cast<std::uint8_t>(floorLog2(static_cast<std::uint64_t>(live.floor())) + 1);
  std::uint32_t at = ColumnRange::kNone;  // the event `live` is for
  for (std::uint32_t e : rep) {
    if (e != ColumnRange::kNone && e < lt.live->size()) {
      // Sweep forward; start afresh when the jump is longer than a scan of all allocations.
      if (at == ColumnRange::kNone || e < at || e - at > lt.count()) {
        live.scan(e);
      } else if (!lt.event_size_class.empty()) {
        const std::uint8_t* cls = lt.event_size_class.data();
        for (std::uint32_t k = at + 1; k <= e; ++k) {
          const std::uint8_t c = cls[k];
          if ((c & (kStartsBlock | kEndsBlock)) && (c & kSizeClassMask) >= min_class)
            live.applyMarked(k, (c & kStartsBlock) != 0);
        }
      } else {
        for (std::uint32_t k = at + 1; k <= e; ++k) live.apply(k);
      }
      at = e;
      live.emit(e, out);
    }
    column_done(out);
  }
}

}  // namespace

BandColumns computeBands(const LifetimeView& lt, std::span<const std::uint32_t> rep, std::int64_t threshold) {
  BandColumns out;
  out.offsets.reserve(rep.size() + 1);
  out.offsets.push_back(0);
  out.event.assign(rep.begin(), rep.end());
  sweepBands(lt, rep, threshold, out,
             [](BandColumns& o) { o.offsets.push_back(static_cast<std::uint32_t>(o.spans.size())); });
  return out;
}

void forEachBandColumn(const LifetimeView& lt, std::span<const std::uint32_t> rep, std::int64_t threshold,
                       const std::function<void(std::span<const BandSpan>)>& column) {
  BandColumns out;
  sweepBands(lt, rep, threshold, out, [&](BandColumns& o) {
    column(o.spans);
    o.spans.clear();
  });
}

std::vector<std::uint8_t> eventSizeClasses(const LifetimeView& lt) {
  std::vector<std::uint8_t> out(lt.event_allocation.size(), 0);
  for (std::uint32_t e = 0; e < out.size(); ++e) {
    const auto a = lt.allocationAt(e);
    if (a == kNoAllocation || a >= lt.count()) continue;
    auto c = static_cast<std::uint8_t>(std::min(floorLog2(lt.size(a)) + 1, int{kSizeClassMask}));
    if (lt.begin(a) == e && e < lt.end(a))
      c |= kStartsBlock;
    else if (lt.end(a) == e && lt.begin(a) < e)
      c |= kEndsBlock;
    out[e] = c;
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
