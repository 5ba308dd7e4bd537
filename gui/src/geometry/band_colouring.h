// Colours for the stacked bands such that bands lying one on another differ: which stacks'
// blocks ever touch in the stack of live blocks, and a greedy colouring of the stacks over
// that relation with the golden-angle palette (paletteColour).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "geometry/bands.h"

namespace reservoir::gui {

// The pairs of keys (stacks) whose items (allocations) lie directly on one another at some
// event, the items stacked in index order as computeBands does: an item allocated goes next
// to the live ones just below and above it, and when one is freed the two around it meet.
// Only items of at least `min_size` bytes count (smaller ones are merged out of the stack at
// a coarse scale, so the bigger ones around them meet). Items with key kNoAllocation count
// for the stacking but make no pair. Each pair once, (smaller key, larger key).
std::vector<std::pair<std::uint32_t, std::uint32_t>> neighbourKeys(const LifetimeView& lt,
                                                                   std::span<const std::uint32_t> key_of_item,
                                                                   std::uint64_t min_size);

// The pairs of keys whose bands lie directly on one another in `bands` (the merged grey band
// left out): with the small blocks summed per stack, a stack's band meets bands the blocks
// themselves never touch. Each pair once, (smaller key, larger key).
std::vector<std::pair<std::uint32_t, std::uint32_t>> bandNeighbourKeys(const BandColumns& bands,
                                                                       std::span<const std::uint32_t> key_of_item);
// The same for the bands computeBands(lt, representative, threshold) would give, taken column by
// column (forEachBandColumn) so that neither the columns nor the repeated pairs are held.
std::vector<std::pair<std::uint32_t, std::uint32_t>> bandNeighbourKeys(const LifetimeView& lt,
                                                                       std::span<const std::uint32_t> representative,
                                                                       std::int64_t threshold,
                                                                       std::span<const std::uint32_t> key_of_item);

// A palette index per key: keys in the order of `rank` (colourRanks), each given the first
// index from its rank on whose colour is at least `min_distance` (RGB distance, 0..441) from
// the colours of its neighbours already coloured.
std::vector<std::uint32_t> colourKeys(std::span<const std::uint32_t> rank,
                                      std::span<const std::pair<std::uint32_t, std::uint32_t>> neighbours,
                                      double min_distance);

// How far apart (RGB distance) the colours of neighbouring stacks are kept.
inline constexpr double kDistinctBandColours = 100.0;

// Distance between two 0xAARRGGBB colours in RGB (alpha ignored).
double rgbDistance(std::uint32_t a, std::uint32_t b);

}  // namespace reservoir::gui
