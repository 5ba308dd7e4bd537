#include "reservoir/replay/capture_facts.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>

namespace reservoir::replay {
namespace {

// Closes a file descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// The whole file, if it is a regular file of at most kMaxCaptureJsonBytes: a directory, a pipe
// or a device named X.json, or a file of hundreds of MB, is no capture's sidecar.
Expected<std::string> readSmallFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (f.fd < 0) return Status::error(fmt::format("cannot open it: {}", std::strerror(errno)));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return Status::error(fmt::format("cannot read it: {}", std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) return Status::error("it is a directory, not a file");
  if (!S_ISREG(st.st_mode)) return Status::error("it is not a regular file (a device, pipe or socket)");
  if (static_cast<std::uint64_t>(st.st_size) > kMaxCaptureJsonBytes)
    return Status::error(fmt::format("it is {} bytes, more than a capture's sidecar holds (at most {})", st.st_size,
                                     kMaxCaptureJsonBytes));
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(f.fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::error(fmt::format("cannot read it: {}", std::strerror(errno)));
    if (n == 0) break;  // shorter than it was: what is there
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  return text;
}

// A value for a message, at most 40 characters of it.
std::string shown(const nlohmann::json& v) {
  std::string text = v.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

bool present(const nlohmann::json& j, const char* key) { return j.contains(key) && !j[key].is_null(); }

// An integer in [lo, hi], or nullopt.
std::optional<std::uint64_t> integerIn(const nlohmann::json& v, std::uint64_t lo, std::uint64_t hi) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u >= lo && u <= hi) return u;
  } else if (v.is_number_integer() && lo == 0 && v.get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(v.get<std::int64_t>());
  }
  return std::nullopt;
}

Status readDevice(const nlohmann::json& j, CaptureFacts& f) {
  if (present(j, "fraction")) {
    const auto& v = j["fraction"];
    if (!v.is_number() || !(v.get<double>() >= 0.0 && v.get<double>() <= 1.0))
      return Status::error(fmt::format("'fraction' is {}, not a memory fraction in [0, 1]", shown(v)));
    f.fraction = v.get<double>();
  }
  if (present(j, "device_total")) {
    const auto total = integerIn(j["device_total"], 1, (std::uint64_t{1} << 62) - 1);
    if (!total)
      return Status::error(fmt::format("'device_total' is {}, not a device's memory in bytes (1 to 2^62 - 1)",
                                       shown(j["device_total"])));
    f.device_total = *total;
  }
  if (present(j, "reset_peaks_after_event")) {
    const auto event = integerIn(j["reset_peaks_after_event"], 0, std::numeric_limits<std::uint32_t>::max() - 1u);
    if (!event)
      return Status::error(fmt::format("'reset_peaks_after_event' is {}, not an event index (0 to {})",
                                       shown(j["reset_peaks_after_event"]),
                                       std::numeric_limits<std::uint32_t>::max() - 1u));
    f.reset_peaks_after_event = static_cast<std::uint32_t>(*event);
  }
  return {};
}

// The integer figures of one object (memory_stats, step figures) into `out` under `prefix`;
// numbers past the int64 range are refused rather than wrapped.
Status readFigures(const nlohmann::json& object, const std::string& prefix, std::map<std::string, std::int64_t>& out) {
  for (auto& [k, v] : object.items()) {
    if (!v.is_number_integer()) continue;
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t{std::numeric_limits<std::int64_t>::max()})
      return Status::error(fmt::format("'{}{}' is {}, past the 64-bit range of a statistic", prefix, k, shown(v)));
    out[prefix + k] = v.get<std::int64_t>();
  }
  return {};
}

Expected<CaptureFacts> factsOf(const nlohmann::json& j, const std::string& path) {
  CaptureFacts f;
  f.path = path;
  if (Status st = readDevice(j, f); !st.ok()) return st;
  if (j.contains("memory_stats") && j["memory_stats"].is_object())
    if (Status st = readFigures(j["memory_stats"], "", f.memory_stats); !st.ok()) return st;
  for (auto& [k, v] : j.items()) {
    if (!v.is_object() || k == "memory_stats" || k == "config") continue;
    if (Status st = readFigures(v, k + ".", f.step_figures); !st.ok()) return st;
  }
  return f;
}

}  // namespace

Expected<CaptureFacts> readCaptureFacts(const std::string& path) {
  auto text = readSmallFile(path);
  auto refused = [&](const std::string& why) {
    return Status::error(fmt::format("the capture JSON {} cannot be used: {}", path, why));
  };
  if (!text) return refused(text.message());
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return refused("it is not a JSON object (a capture's sidecar is one)");
  auto facts = factsOf(j, path);
  if (!facts) return refused(facts.message());
  return facts;
}

std::string captureJsonPath(const std::string& trace_path) {
  std::filesystem::path p(trace_path);
  for (int i = 0; i < 2 && p.has_extension(); ++i) {
    const auto ext = p.extension().string();
    if (ext == ".gz" || ext == ".zst" || ext == ".pickle" || ext == ".pkl") p.replace_extension();
  }
  p += ".json";
  return p.string();
}

Expected<std::optional<CaptureFacts>> captureFactsBeside(const std::string& trace_path) {
  const std::string path = captureJsonPath(trace_path);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR)) return std::optional<CaptureFacts>{};
  auto facts = readCaptureFacts(path);
  if (!facts)
    return Status::error(
        fmt::format("{} (beside the trace; remove or rename it, or read the trace without its "
                    "capture JSON)",
                    facts.message()));
  return std::optional<CaptureFacts>(std::move(*facts));
}

std::optional<CaptureFacts> findCaptureFacts(const std::string& trace_path) {
  auto facts = captureFactsBeside(trace_path);
  if (!facts) return std::nullopt;
  return std::move(*facts);
}

}  // namespace reservoir::replay
