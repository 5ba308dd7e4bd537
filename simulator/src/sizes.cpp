#include "reservoir/simulator/sizes.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace reservoir::sim {

std::string formatSize(ByteCount bytes) {
  // Mirrors c10's format_size: bytes up to 1 KiB, then KiB/MiB/GiB with two decimals.
  const auto b = static_cast<double>(bytes);
  if (bytes <= 1024) return fmt::format("{} bytes", bytes);
  if (bytes <= 1048576) return fmt::format("{:.2f} KiB", b / 1024.0);
  if (bytes <= 1073741824ull) return fmt::format("{:.2f} MiB", b / 1048576.0);
  return fmt::format("{:.2f} GiB", b / 1073741824.0);
}

std::string formatSizeExact(ByteCount bytes) {
  constexpr ByteCount kGiB = 1024 * kMiB;
  if (bytes != 0 && bytes % kGiB == 0) return fmt::format("{} GiB", bytes / kGiB);
  if (bytes != 0 && bytes % kMiB == 0) return fmt::format("{} MiB", bytes / kMiB);
  if (bytes != 0 && bytes % 1024 == 0) return fmt::format("{} KiB", bytes / 1024);
  return fmt::format("{} bytes", bytes);
}

std::optional<ByteCount> parseSize(std::string_view text) {
  std::string s;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  if (s.empty()) return std::nullopt;
  std::size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  if (i == 0) return std::nullopt;
  const std::string number = s.substr(0, i);
  std::string unit = s.substr(i);
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double mult = 1;
  if (unit.empty() || unit == "b" || unit == "bytes")
    mult = 1;
  else if (unit == "k" || unit == "kb" || unit == "kib")
    mult = 1024.0;
  else if (unit == "m" || unit == "mb" || unit == "mib")
    mult = 1024.0 * 1024;
  else if (unit == "g" || unit == "gb" || unit == "gib")
    mult = 1024.0 * 1024 * 1024;
  else if (unit == "t" || unit == "tb" || unit == "tib")
    mult = 1024.0 * 1024 * 1024 * 1024;
  else
    return std::nullopt;
  if (number.find('.') == std::string::npos) {
    ByteCount v = 0;
    auto [p, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
    if (ec != std::errc() || p != number.data() + number.size()) return std::nullopt;
    const auto m = static_cast<ByteCount>(mult);
    if (m != 0 && v > ~ByteCount{0} / m) return std::nullopt;
    return v * m;
  }
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v) || v < 0) return std::nullopt;
  const double bytes = std::round(v * mult);
  if (bytes > 1.8e19) return std::nullopt;
  return static_cast<ByteCount>(bytes);
}

}  // namespace reservoir::sim
