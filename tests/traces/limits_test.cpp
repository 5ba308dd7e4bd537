// Pathological nesting: the pickle machine is iterative, so a million nested containers
// neither recurse nor take memory out of proportion; they are rejected quickly.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <string>
#include <vector>

#include "reservoir/traces/reader.h"

namespace reservoir::traces {
namespace {

constexpr std::size_t kDepth = 1'000'000;

std::vector<std::uint8_t> pickleOf(const std::string& body) {
  const std::string text = "\x80\x04" + body + ".";  // PROTO 4, body, STOP
  return std::vector<std::uint8_t>(text.begin(), text.end());
}

long peakRssMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

void expectRejectedQuickly(const std::vector<std::uint8_t>& bytes, const std::string& reason) {
  const auto start = std::chrono::steady_clock::now();
  auto snap = readSnapshotBytes(bytes, "nested");
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(snap.ok());
  EXPECT_NE(snap.message().find(reason), std::string::npos) << snap.message();
  EXPECT_LT(seconds, 20.0);
  // A few hundred bytes per open container at most (the input is about 2 MB).
  EXPECT_LT(peakRssMiB(), 1024) << "peak RSS in MiB";
}

// [[[[...]]]]: a million EMPTY_LISTs, then a million APPENDs folding them into each other.
TEST(Limits, MillionNestedLists) {
  expectRejectedQuickly(pickleOf(std::string(kDepth, ']') + std::string(kDepth - 1, 'a')),
                        "the pickled object is list");
}

// {k: {k: {...}}}: EMPTY_DICT and a key per level, then SETITEMs.
TEST(Limits, MillionNestedDicts) {
  std::string body;
  for (std::size_t i = 0; i < kDepth; ++i) body += "}N";
  body.resize(body.size() - 1);  // the innermost dict has no key
  body += std::string(kDepth - 1, 's');
  expectRejectedQuickly(pickleOf(body), "has no 'segments' / 'device_traces' key");
}

// ((((),),),): an empty tuple wrapped a million times by TUPLE1.
TEST(Limits, MillionNestedTuples) {
  std::string body = ")";
  for (std::size_t i = 0; i < kDepth; ++i) body += "\x85";  // TUPLE1 wraps the top
  expectRejectedQuickly(pickleOf(body), "the pickled object is tuple");
}

TEST(Limits, MillionMarksThenStop) {
  expectRejectedQuickly(pickleOf(std::string(kDepth, '(')), "STOP with an empty stack");
}

}  // namespace
}  // namespace reservoir::traces
