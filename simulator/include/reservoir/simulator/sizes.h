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
// Parses a size: bytes ("1073741824", "100B", "100 bytes"), binary units ("4KiB", "512MiB",
// "1.5 GiB", "2TiB": 2^10 to 2^40 bytes, as PyTorch prints sizes) or decimal units ("80GB" is
// 80 x 10^9 bytes, "512MB", "4kB", "1TB": 10^3 to 10^12, as Hugging Face Accelerate reads them
// and GPU makers quote memory). Units are case-insensitive. A bare K, M, G or T is ambiguous
// and refused. Returns nullopt for anything else; sizeError says why.
std::optional<ByteCount> parseSize(std::string_view text);
// Why `text` is not a size, in plain words ("'80G' is ambiguous: write 80GiB (80 x 2^30 bytes) or
// 80GB (80 x 10^9 bytes)"); empty when it is one.
std::string sizeError(std::string_view text);

}  // namespace reservoir::sim
