// Interned strings: each distinct string is stored once and named by a StringId.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "reservoir/core/strong_id.h"

namespace reservoir::traces {

class StringTable {
 public:
  StringTable();
  StringTable(StringTable&&) noexcept;
  StringTable& operator=(StringTable&&) noexcept;
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;
  ~StringTable();

  // Returns the id of `text`, adding it if it is new.
  StringId intern(std::string_view text);
  // The id of `text` if it was interned, an invalid id otherwise.
  [[nodiscard]] StringId find(std::string_view text) const;

  [[nodiscard]] std::string_view view(StringId id) const;
  [[nodiscard]] std::size_t size() const { return views_.size(); }
  // Bytes held by the table (text and index).
  [[nodiscard]] std::size_t memoryBytes() const;

 private:
  void grow();
  [[nodiscard]] std::size_t slotOf(std::string_view text, std::uint64_t hash) const;

  std::vector<std::unique_ptr<char[]>> chunks_;
  std::size_t chunk_used_ = 0;
  std::size_t chunk_capacity_ = 0;
  std::vector<std::string_view> views_;
  std::vector<std::uint32_t> slots_;  // open addressing: index+1 into views_, 0 = empty
  std::vector<std::uint64_t> hashes_;
};

}  // namespace reservoir::traces
