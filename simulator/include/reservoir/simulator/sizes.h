// Size constants and rules of the CUDA caching allocator, and PyTorch-style byte formatting.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "reservoir/core/units.h"

namespace reservoir::sim {

using reservoir::Addr;
using reservoir::ByteCount;

inline constexpr ByteCount kMiB = 1024 * 1024;
inline constexpr ByteCount kMinBlockSize = 512;         // every request is a multiple of this
inline constexpr ByteCount kSmallSize = kMiB;           // <= this: small pool
inline constexpr ByteCount kSmallBuffer = 2 * kMiB;     // small-pool segment / small expandable page
inline constexpr ByteCount kMinLargeAlloc = 10 * kMiB;  // large requests below get a large_segment_size segment
inline constexpr ByteCount kRoundLarge = 2 * kMiB;      // large segments above that round to 2 MiB
inline constexpr ByteCount kDefaultLargeSegment = 20 * kMiB;
inline constexpr ByteCount kUnlimited = ~ByteCount{0};  // max_split_size when not set
// The most virtual address space one expandable segment can reserve: a GPU's address space
// (48-49 bits on current chips). A trace or a device that asks for more is not a real one.
inline constexpr ByteCount kMaxReservation = ByteCount{1} << 48;

// "1.50 GiB", "20.00 MiB", "512 bytes": the format of PyTorch's OOM messages.
std::string formatSize(ByteCount bytes);
// Exact binary units when they divide evenly ("20 MiB"), else bytes.
std::string formatSizeExact(ByteCount bytes);
// Parses "1073741824", "1GiB", "1.5 GiB", "512MiB", "20MB" (MB = MiB, as PyTorch's *_mb options
// mean), "4KiB", "100B". Returns nullopt for anything else.
std::optional<ByteCount> parseSize(std::string_view text);

}  // namespace reservoir::sim
