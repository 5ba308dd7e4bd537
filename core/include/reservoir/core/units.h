// Byte counts and device addresses: one definition for every layer (the trace model, the
// allocator model, the replay library).
#pragma once

#include <cstdint>

namespace reservoir {

using ByteCount = std::uint64_t;  // a size in bytes, as PyTorch's size_t
using Addr = std::uint64_t;       // a device address (a CUdeviceptr)

}  // namespace reservoir
