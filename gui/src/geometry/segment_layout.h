// The allocator-state map: segments laid end to end on a ribbon of pixels that wraps into
// rows (like text), with a small gap between segments; a fixed bytes-per-pixel scale
// (from the trace's peak) keeps the picture steady while the cursor moves.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace reservoir::gui {

struct RibbonPiece {
  int row = 0;
  double x0 = 0, x1 = 0;
};

struct SegmentLayout {
  double bytes_per_px = 1.0;
  double width = 1.0;         // ribbon row width in pixels
  double gap = 3.0;           // pixels between segments
  std::vector<double> start;  // ribbon position of each segment (pixels)
  std::vector<std::uint64_t> size;
  int rows = 0;

  // Pieces of ribbon [p0, p1) split at row ends.
  [[nodiscard]] std::vector<RibbonPiece> pieces(double p0, double p1) const;
  // Ribbon position of byte `offset` inside segment `s`.
  [[nodiscard]] double position(std::size_t s, std::uint64_t offset) const;
  // The segment and byte offset at (row, x); false in a gap.
  struct Hit {
    std::size_t segment = 0;
    std::uint64_t offset = 0;
  };
  [[nodiscard]] bool hit(int row, double x, Hit& out) const;
};

// Lays out `sizes` (bytes, in address order) on rows of `width` pixels. `scale_bytes`: the
// byte count the rows are sized for (e.g. the peak reserved), so that `max_rows` rows hold it.
SegmentLayout layoutSegments(std::span<const std::uint64_t> sizes, double width, int max_rows, double scale_bytes,
                             double gap = 3.0);

// Index of the block containing `offset`, given block start offsets (sorted); -1 if none.
int blockAt(std::span<const std::uint64_t> block_offsets, std::span<const std::uint64_t> block_sizes,
            std::uint64_t offset);

}  // namespace reservoir::gui
