#include "writer_settings.h"

#include <array>
#include <charconv>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace reservoir::traces::detail {
namespace {

constexpr std::array<std::string_view, 16> kRoundupKeys = {
    "1", "2", "4", "8", "16", "32", "64", "128", "256", "512", "1024", "2048", "4096", "8192", "16384", "32768"};

struct Roundup {
  const std::array<std::uint64_t, 16>* divisions;
};
using SettingValue = std::variant<std::monostate, bool, std::int64_t, double, std::string_view, Roundup>;

struct SettingItem {
  std::string_view key;
  SettingValue value;
};

bool knownKey(std::string_view key) {
  static constexpr std::array<std::string_view, 9> kKnown = {
      "PYTORCH_CUDA_ALLOC_CONF",       "max_split_size",
      "garbage_collection_threshold",  "expandable_segments",
      "pinned_num_register_threads",   "release_lock_on_cudamalloc",
      "pinned_use_cuda_host_register", "graph_capture_record_stream_reuse",
      "roundup_power2_divisions"};
  for (std::string_view k : kKnown)
    if (k == key) return true;
  return false;
}

// The reader keeps settings it does not know as the Python repr of their value; this turns
// that text back into the value it came from (a str for anything it cannot parse).
SettingValue fromRepr(std::string_view text) {
  if (text == "None") return std::monostate{};
  if (text == "True" || text == "False") return text == "True";
  if (text.size() >= 2 && text.front() == '\'' && text.back() == '\'') return text.substr(1, text.size() - 2);
  std::int64_t i = 0;
  const char* end = text.data() + text.size();
  if (auto [ptr, ec] = std::from_chars(text.data(), end, i); ec == std::errc() && ptr == end) return i;
  const std::string copy(text);
  char* stop = nullptr;
  const double d = std::strtod(copy.c_str(), &stop);
  if (!copy.empty() && stop == copy.c_str() + copy.size()) return d;
  return text;
}

std::vector<SettingItem> settingItems(const RecordedSettings& s) {
  std::vector<SettingItem> items = {
      {"PYTORCH_CUDA_ALLOC_CONF", std::string_view(s.alloc_conf)},
      {"max_split_size", s.max_split_size},
      {"garbage_collection_threshold", s.garbage_collection_threshold},
      {"expandable_segments", s.expandable_segments},
  };
  if (s.pinned_num_register_threads) items.push_back({"pinned_num_register_threads", *s.pinned_num_register_threads});
  if (s.release_lock_on_cudamalloc) items.push_back({"release_lock_on_cudamalloc", *s.release_lock_on_cudamalloc});
  if (s.pinned_use_cuda_host_register)
    items.push_back({"pinned_use_cuda_host_register", *s.pinned_use_cuda_host_register});
  if (s.graph_capture_record_stream_reuse)
    items.push_back({"graph_capture_record_stream_reuse", *s.graph_capture_record_stream_reuse});
  items.push_back({"roundup_power2_divisions", Roundup{&s.roundup_power2_divisions}});
  for (const auto& [key, text] : s.other)
    if (!knownKey(key)) items.push_back({key, fromRepr(text)});
  return items;
}

void writeRoundup(Pickler& p, const std::array<std::uint64_t, 16>& divisions) {
  p.emptyDict();
  p.mark();
  for (std::size_t i = 0; i < divisions.size(); ++i) {
    p.boundary();
    p.str(kRoundupKeys[i]);
    p.boundary();
    p.uinteger(divisions[i]);
  }
  p.endDictBatch(divisions.size());
}

void writeValue(Pickler& p, const SettingValue& value) {
  p.boundary();
  if (std::holds_alternative<std::monostate>(value))
    p.none();
  else if (const bool* b = std::get_if<bool>(&value))
    p.boolean(*b);
  else if (const std::int64_t* i = std::get_if<std::int64_t>(&value))
    p.integer(*i);
  else if (const double* d = std::get_if<double>(&value))
    p.real(*d);
  else if (const std::string_view* s = std::get_if<std::string_view>(&value))
    p.str(*s);
  else
    writeRoundup(p, *std::get<Roundup>(value).divisions);
}

}  // namespace

void writeSettings(Pickler& p, const RecordedSettings& settings) {
  const std::vector<SettingItem> items = settingItems(settings);
  p.boundary();
  p.emptyDict();
  for (std::size_t start = 0; start < items.size(); start += Pickler::kBatchSize) {
    const std::size_t n = std::min(Pickler::kBatchSize, items.size() - start);
    if (n > 1) p.mark();
    for (std::size_t i = start; i < start + n; ++i) {
      p.boundary();
      p.str(items[i].key);
      writeValue(p, items[i].value);
    }
    p.endDictBatch(n);
  }
}

}  // namespace reservoir::traces::detail
