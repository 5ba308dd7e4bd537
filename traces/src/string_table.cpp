#include "reservoir/traces/string_table.h"

#include <cstring>

namespace reservoir::traces {
namespace {

std::uint64_t hashText(std::string_view s) {
  // FNV-1a over 8-byte words, then a final mix: fast for the short strings snapshots hold.
  std::uint64_t h = 0xcbf29ce484222325ull ^ s.size();
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 32;
  }
  for (; i < s.size(); ++i) h = (h ^ static_cast<unsigned char>(s[i])) * 0x100000001b3ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

constexpr std::size_t kChunkBytes = 1u << 16;

}  // namespace

StringTable::StringTable() : slots_(1024, 0) {}
StringTable::StringTable(StringTable&&) noexcept = default;
StringTable& StringTable::operator=(StringTable&&) noexcept = default;
StringTable::~StringTable() = default;

std::size_t StringTable::slotOf(std::string_view text, std::uint64_t hash) const {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    const std::uint32_t s = slots_[i];
    if (s == 0) return i;
    if (hashes_[s - 1] == hash && views_[s - 1] == text) return i;
  }
}

StringId StringTable::find(std::string_view text) const {
  const std::uint32_t s = slots_[slotOf(text, hashText(text))];
  return s == 0 ? StringId() : StringId(s - 1);
}

StringId StringTable::intern(std::string_view text) {
  const std::uint64_t h = hashText(text);
  std::size_t slot = slotOf(text, h);
  if (slots_[slot] != 0) return StringId(slots_[slot] - 1);
  if (chunk_used_ + text.size() > chunk_capacity_) {
    chunk_capacity_ = std::max(kChunkBytes, text.size());
    chunks_.push_back(std::make_unique<char[]>(chunk_capacity_));
    chunk_used_ = 0;
  }
  char* dst = chunks_.back().get() + chunk_used_;
  if (!text.empty()) std::memcpy(dst, text.data(), text.size());
  chunk_used_ += text.size();
  views_.emplace_back(dst, text.size());
  hashes_.push_back(h);
  slots_[slot] = static_cast<std::uint32_t>(views_.size());
  if (views_.size() * 2 > slots_.size()) grow();
  return StringId(static_cast<std::uint32_t>(views_.size() - 1));
}

void StringTable::grow() {
  std::vector<std::uint32_t> bigger(slots_.size() * 2, 0);
  const std::size_t mask = bigger.size() - 1;
  for (std::uint32_t i = 0; i < views_.size(); ++i) {
    std::size_t j = hashes_[i] & mask;
    while (bigger[j] != 0) j = (j + 1) & mask;
    bigger[j] = i + 1;
  }
  slots_ = std::move(bigger);
}

std::string_view StringTable::view(StringId id) const { return views_.at(id.value()); }

std::size_t StringTable::memoryBytes() const {
  std::size_t text = 0;
  for (std::size_t i = 0; i < chunks_.size(); ++i) text += i + 1 == chunks_.size() ? chunk_capacity_ : kChunkBytes;
  return text + views_.capacity() * sizeof(std::string_view) + slots_.capacity() * 4 + hashes_.capacity() * 8;
}

}  // namespace reservoir::traces
