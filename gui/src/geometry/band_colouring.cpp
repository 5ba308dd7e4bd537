#include "geometry/band_colouring.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>

namespace reservoir::gui {

double rgbDistance(std::uint32_t a, std::uint32_t b) {
  double d = 0;
  for (int shift : {16, 8, 0}) {
    const double x = static_cast<double>((a >> shift) & 0xffu) - static_cast<double>((b >> shift) & 0xffu);
    d += x * x;
  }
  return std::sqrt(d);
}

namespace {

struct Change {
  std::uint32_t event = 0;
  bool alloc = false;
  std::uint32_t item = 0;
  auto operator<=>(const Change&) const = default;  // frees before allocs at one event
};

class Pairs {
 public:
  explicit Pairs(std::span<const std::uint32_t> key) : key_(key) {}
  void add(std::uint32_t a, std::uint32_t b) {
    const std::uint32_t ka = key_[a], kb = key_[b];
    if (ka == kNoAllocation || kb == kNoAllocation || ka == kb) return;
    out_.emplace_back(std::min(ka, kb), std::max(ka, kb));
    // The same pairs come again and again (column after column): keep each once as they come.
    if (out_.size() >= next_compact_) {
      compact();
      next_compact_ = std::max<std::size_t>(2 * out_.size(), kFirstCompact);
    }
  }
  std::vector<std::pair<std::uint32_t, std::uint32_t>> take() {
    compact();
    return std::move(out_);
  }

 private:
  static constexpr std::size_t kFirstCompact = 1u << 16;
  void compact() {
    std::sort(out_.begin(), out_.end());
    out_.erase(std::unique(out_.begin(), out_.end()), out_.end());
  }
  std::size_t next_compact_ = kFirstCompact;
  std::span<const std::uint32_t> key_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out_;
};

}  // namespace

std::vector<std::pair<std::uint32_t, std::uint32_t>> neighbourKeys(const LifetimeView& lt,
                                                                   std::span<const std::uint32_t> key_of_item,
                                                                   std::uint64_t min_size) {
  std::vector<Change> changes;
  for (std::uint32_t a = 0; a < lt.count() && a < key_of_item.size(); ++a) {
    if (lt.size(a) < min_size || lt.end(a) <= lt.begin(a)) continue;
    changes.push_back({lt.begin(a), true, a});
    changes.push_back({lt.end(a), false, a});
  }
  std::sort(changes.begin(), changes.end());
  Pairs pairs(key_of_item);
  std::set<std::uint32_t> live;
  for (const Change& c : changes) {
    if (c.alloc) {
      const auto it = live.insert(c.item).first;
      if (it != live.begin()) pairs.add(*std::prev(it), c.item);
      if (std::next(it) != live.end()) pairs.add(c.item, *std::next(it));
      continue;
    }
    const auto it = live.find(c.item);
    if (it == live.end()) continue;
    if (it != live.begin() && std::next(it) != live.end()) pairs.add(*std::prev(it), *std::next(it));
    live.erase(it);
  }
  return pairs.take();
}

namespace {

void addColumnPairs(std::span<const BandSpan> col, std::span<const std::uint32_t> key_of_item, Pairs& pairs) {
  for (std::size_t i = 1; i < col.size(); ++i) {
    const auto a = col[i - 1].allocation, b = col[i].allocation;
    if (a != kMergedBand && b != kMergedBand && a < key_of_item.size() && b < key_of_item.size()) pairs.add(a, b);
  }
}

}  // namespace

std::vector<std::pair<std::uint32_t, std::uint32_t>> bandNeighbourKeys(const BandColumns& bands,
                                                                       std::span<const std::uint32_t> key_of_item) {
  Pairs pairs(key_of_item);
  for (std::size_t c = 0; c + 1 < bands.offsets.size(); ++c) addColumnPairs(bands.column(c), key_of_item, pairs);
  return pairs.take();
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> bandNeighbourKeys(const LifetimeView& lt,
                                                                       std::span<const std::uint32_t> representative,
                                                                       std::int64_t threshold,
                                                                       std::span<const std::uint32_t> key_of_item) {
  Pairs pairs(key_of_item);
  forEachBandColumn(lt, representative, threshold,
                    [&](std::span<const BandSpan> col) { addColumnPairs(col, key_of_item, pairs); });
  return pairs.take();
}

std::vector<std::uint32_t> colourKeys(std::span<const std::uint32_t> rank,
                                      std::span<const std::pair<std::uint32_t, std::uint32_t>> neighbours,
                                      double min_distance) {
  const std::size_t keys = rank.size();
  std::vector<std::vector<std::uint32_t>> adjacent(keys);
  for (const auto& [a, b] : neighbours)
    if (a < keys && b < keys) {
      adjacent[a].push_back(b);
      adjacent[b].push_back(a);
    }
  std::vector<std::uint32_t> order(keys);
  for (std::uint32_t k = 0; k < keys; ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) { return rank[x] < rank[y]; });
  constexpr std::uint32_t kUncoloured = 0xffffffffu;
  std::vector<std::uint32_t> index(keys, kUncoloured);
  for (const std::uint32_t k : order) {
    // From the key's own rank on, so that keys far apart still get varied colours; a key with
    // more neighbours than the palette has room for keeps the last index tried.
    std::uint32_t i = rank[k];
    for (std::uint32_t step = 0; step < 4096; ++step, ++i) {
      const std::uint32_t c = paletteColour(i);
      const bool far = std::all_of(adjacent[k].begin(), adjacent[k].end(), [&](std::uint32_t n) {
        return index[n] == kUncoloured || rgbDistance(paletteColour(index[n]), c) >= min_distance;
      });
      if (far) break;
    }
    index[k] = i;
  }
  return index;
}

}  // namespace reservoir::gui
