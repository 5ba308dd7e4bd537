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

namespace {

struct SizeText {
  std::string number, unit;  // "1.5", "gib" (lower case; spaces dropped)
};

SizeText splitSize(std::string_view text) {
  std::string s;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  std::size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  SizeText t{s.substr(0, i), s.substr(i)};
  for (char& c : t.unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return t;
}

// The unit's bytes (1 for bytes; 0: not a unit; nullopt: a bare k/m/g/t, ambiguous).
std::optional<ByteCount> unitBytes(const std::string& unit) {
  if (unit.empty() || unit == "b" || unit == "bytes") return 1;
  static constexpr const char* kPrefixes = "kmgt";
  for (int p = 0; p < 4; ++p) {
    const std::string letter(1, kPrefixes[p]);
    ByteCount binary = 1, decimal = 1;
    for (int k = 0; k <= p; ++k) {
      binary *= 1024;
      decimal *= 1000;
    }
    if (unit == letter + "ib") return binary;
    if (unit == letter + "b") return decimal;
    if (unit == letter) return std::nullopt;
  }
  return 0;
}

}  // namespace

std::optional<ByteCount> parseSize(std::string_view text) {
  const SizeText t = splitSize(text);
  if (t.number.empty()) return std::nullopt;
  const auto unit = unitBytes(t.unit);
  if (!unit || *unit == 0) return std::nullopt;
  const ByteCount m = *unit;
  if (t.number.find('.') == std::string::npos) {
    ByteCount v = 0;
    auto [p, ec] = std::from_chars(t.number.data(), t.number.data() + t.number.size(), v);
    if (ec != std::errc() || p != t.number.data() + t.number.size()) return std::nullopt;
    if (v > ~ByteCount{0} / m) return std::nullopt;
    return v * m;
  }
  char* end = nullptr;
  const double v = std::strtod(t.number.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v) || v < 0) return std::nullopt;
  const double bytes = std::round(v * static_cast<double>(m));
  if (bytes > 1.8e19) return std::nullopt;
  return static_cast<ByteCount>(bytes);
}

std::string sizeError(std::string_view text) {
  if (parseSize(text)) return {};
  const SizeText t = splitSize(text);
  if (!t.number.empty() && !unitBytes(t.unit)) {
    const char upper = static_cast<char>(std::toupper(static_cast<unsigned char>(t.unit[0])));
    return fmt::format("'{}' is ambiguous: write {}{}iB ({} x 2^{} bytes) or {}{}B ({} x 10^{} bytes)", text, t.number,
                       upper, t.number, 10 * (std::string_view("KMGT").find(upper) + 1), t.number, upper, t.number,
                       3 * (std::string_view("KMGT").find(upper) + 1));
  }
  return fmt::format("not a size: '{}'", text);
}

}  // namespace reservoir::sim
