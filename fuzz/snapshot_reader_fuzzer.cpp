// libFuzzer target: the snapshot reader must never crash, hang or trip a sanitizer on any input.
#include <cstddef>
#include <cstdint>
#include <span>

#include "reservoir/traces/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Production limits (the defaults): the fuzzer checks the reader exactly as users run it.
  const reservoir::traces::ReadOptions options;
  auto snapshot = reservoir::traces::readSnapshotBytes(std::span<const std::uint8_t>(data, size), "fuzz", options);
  static_cast<void>(snapshot.ok());
  return 0;
}
