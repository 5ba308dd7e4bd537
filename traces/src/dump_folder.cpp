#include "reservoir/traces/dump_folder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

namespace reservoir::traces {
namespace {

namespace fs = std::filesystem;

bool isDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

bool endsWith(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

bool isSnapshotName(std::string_view name) {
  for (std::string_view ext : {".pickle", ".pickle.gz", ".pickle.zst", ".pkl"})
    if (endsWith(name, ext) && name.size() > ext.size()) return true;
  return false;
}

// "iteration_N" or "iteration_N_exit": N, and whether it is the exit dump.
struct Iteration {
  std::int64_t n = 0;
  bool exit = false;
  fs::path dir;
};

std::optional<Iteration> iterationOf(const fs::path& dir) {
  const std::string name = dir.filename().string();
  constexpr std::string_view kHead = "iteration_";
  if (name.rfind(kHead, 0) != 0) return std::nullopt;
  std::string_view rest = std::string_view(name).substr(kHead.size());
  Iteration it{0, false, dir};
  if (endsWith(rest, "_exit")) {
    it.exit = true;
    rest.remove_suffix(5);
  }
  if (rest.empty() || rest.size() > 18 || !std::all_of(rest.begin(), rest.end(), isDigit)) return std::nullopt;
  for (char c : rest) it.n = it.n * 10 + (c - '0');
  return it;
}

// The entries of `dir` (sorted by name), or an error naming it.
Expected<std::vector<fs::directory_entry>> entriesOf(const fs::path& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return Status::error(fmt::format("{}: cannot read the folder: {}", dir.string(), ec.message()));
  std::vector<fs::directory_entry> out;
  for (const auto& e : it) out.push_back(e);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path() < b.path(); });
  return out;
}

Expected<std::vector<Iteration>> iterationsIn(const fs::path& dir) {
  auto entries = entriesOf(dir);
  if (!entries) return entries.status();
  std::vector<Iteration> its;
  for (const auto& e : *entries) {
    std::error_code ec;
    if (!e.is_directory(ec)) continue;
    if (auto it = iterationOf(e.path())) its.push_back(*it);
  }
  return its;
}

std::string iterationName(const Iteration& it) { return fmt::format("{}{}", it.n, it.exit ? "_exit" : ""); }

// The iteration asked for (or the newest) among `its`.
Expected<fs::path> chooseIteration(const fs::path& dir, std::vector<Iteration> its, std::optional<std::int64_t> want) {
  std::sort(its.begin(), its.end(), [](const Iteration& a, const Iteration& b) {
    return a.n != b.n ? a.n < b.n : (!a.exit && b.exit);
  });
  if (!want) return its.back().dir;
  const Iteration* plain = nullptr;
  const Iteration* exit = nullptr;
  for (const auto& it : its)
    if (it.n == *want) (it.exit ? exit : plain) = &it;
  if (plain) return plain->dir;
  if (exit) return exit->dir;
  std::string there;
  for (const auto& it : its) there += (there.empty() ? "" : ", ") + iterationName(it);
  return Status::usage(fmt::format("{} has no iteration {} (its iterations: {})", dir.string(), *want, there));
}

// The snapshot files directly in `dir`, by rank.
Expected<std::vector<RankedSnapshot>> filesIn(const fs::path& dir) {
  auto entries = entriesOf(dir);
  if (!entries) return entries.status();
  std::vector<RankedSnapshot> out;
  for (const auto& e : *entries) {
    std::error_code ec;
    if (e.is_directory(ec) || !isSnapshotName(e.path().filename().string())) continue;
    out.push_back({e.path().string(), rankInFileName(e.path().string())});
  }
  if (out.empty())
    return Status::error(fmt::format(
        "{}: no snapshots in this folder (looked for *.pickle, *.pickle.gz, *.pickle.zst, *.pkl and "
        "torchtitan's memory_snapshot/iteration_N/)",
        dir.string()));
  std::stable_sort(out.begin(), out.end(), [](const RankedSnapshot& a, const RankedSnapshot& b) {
    if (a.rank.has_value() != b.rank.has_value()) return a.rank.has_value();
    return a.rank && *a.rank < *b.rank;
  });
  for (std::size_t i = 1; i < out.size(); ++i)
    if (out[i].rank && out[i - 1].rank == out[i].rank)
      return Status::error(fmt::format("{}: two snapshots of rank {}: {} and {}", dir.string(), *out[i].rank,
                                       fs::path(out[i - 1].path).filename().string(),
                                       fs::path(out[i].path).filename().string()));
  return out;
}

}  // namespace

std::optional<std::int64_t> rankInFileName(std::string_view path) {
  const std::size_t slash = path.find_last_of('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  for (std::size_t at = name.find("rank"); at != std::string_view::npos; at = name.find("rank", at + 1)) {
    if (at > 0 && name[at - 1] != '_' && name[at - 1] != '.' && name[at - 1] != '-') continue;
    std::size_t end = at + 4;
    std::int64_t rank = 0;
    while (end < name.size() && isDigit(name[end]) && end - at < 4 + 9) rank = rank * 10 + (name[end++] - '0');
    if (end == at + 4 || (end < name.size() && isDigit(name[end]))) continue;
    return rank;
  }
  return std::nullopt;
}

bool isFolder(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

Expected<std::vector<RankedSnapshot>> snapshotsInFolder(const std::string& dir, std::optional<std::int64_t> iteration) {
  if (!isFolder(dir)) return Status::error(fmt::format("{}: not a folder", dir));
  fs::path root = fs::path(dir).lexically_normal();
  if (root.filename().empty()) root = root.parent_path();  // "dir/" names dir
  std::error_code ec;
  if (fs::is_directory(root / "memory_snapshot", ec)) root /= "memory_snapshot";
  if (const auto it = iterationOf(root)) {
    // One iteration_N folder given: its files (an iteration asked for must be this one).
    if (iteration && it->n != *iteration)
      return Status::usage(fmt::format("{} is iteration {}, not {}", dir, iterationName(*it), *iteration));
    return filesIn(root);
  }
  auto its = iterationsIn(root);
  if (!its) return its.status();
  if (its->empty()) {
    if (iteration)
      return Status::usage(fmt::format("{} has no iteration_N folders to choose iteration {} from", dir, *iteration));
    return filesIn(root);
  }
  auto chosen = chooseIteration(root, std::move(*its), iteration);
  if (!chosen) return chosen.status();
  return filesIn(*chosen);
}

}  // namespace reservoir::traces
