#pragma once
// torch.cuda.memory_stats()'s keys in plain words, for every front end that shows a statistic
// to someone who has not read the allocator's source: "active.small_pool.peak" -> "peak of
// active small-pool blocks", "reserved_bytes.all.current" -> "reserved bytes now (all pools)".
#include <string>
#include <string_view>

namespace reservoir::replay {

// The words for one memory_stats() key. A key this does not know comes back unchanged, so a
// statistic a newer torch adds is still shown (as its key).
std::string statKeyWords(std::string_view key);

// Whether the key's values are byte counts (a front end shows them as sizes).
bool statKeyIsBytes(std::string_view key);

}  // namespace reservoir::replay
