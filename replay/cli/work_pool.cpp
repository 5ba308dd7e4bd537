#include "work_pool.h"

#include <fmt/format.h>
#include <glob.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <fstream>
#include <new>
#include <numeric>
#include <streambuf>
#include <thread>

#include "commands.h"
#include "reservoir/traces/dump_folder.h"

namespace reservoir::cli {
namespace {

WorkPool* g_installed = nullptr;

bool isGlob(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

Expected<std::vector<std::string>> expandGlob(const std::string& pattern) {
  glob_t g{};
  const int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
  std::vector<std::string> out;
  if (rc == 0)
    for (std::size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  if (out.empty()) return Status::error("no file matches '" + pattern + "'");
  std::sort(out.begin(), out.end());
  return out;
}

Expected<std::vector<std::string>> readList(const std::string& list) {
  std::ifstream in(list);
  if (!in) return Status::error("cannot read the trace list '" + list + "' (given as @" + list + ")");
  const std::filesystem::path dir = std::filesystem::path(list).parent_path();
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    line.erase(0, first);
    const std::filesystem::path p(line);
    out.push_back(p.is_absolute() || dir.empty() ? line : (dir / p).string());
  }
  return out;
}

}  // namespace

std::string itemError(const std::string& message) { return nlohmann::json{{"error", message}}.dump(); }

std::string itemError(const Status& status, const std::string& prefix) {
  nlohmann::json j{{"error", prefix + status.message()}};
  if (status.isUsage()) j["usage"] = true;
  return j.dump();
}

int failItem(std::ostream& err, const nlohmann::json& result) {
  const auto message = result["error"].get<std::string>();
  return result.value("usage", false) ? usage(err, message) : fail(err, message);
}

std::string runItem(const std::function<std::string(std::size_t)>& work, std::size_t i) {
  try {
    return work(i);
  } catch (const std::bad_alloc&) {
    return itemError("out of memory: the input needs more memory than this machine gives");
  } catch (const std::exception& e) {
    return itemError(std::string("internal error: ") + e.what());
  } catch (...) {
    return itemError("internal error: an unknown exception");
  }
}

std::vector<std::string> WorkPool::run(const std::vector<std::uint64_t>& costs,
                                       const std::function<std::string(std::size_t)>& work, unsigned threads,
                                       std::ostream& /*err*/) {
  const std::vector<std::size_t> order = itemsOf(assignItems(costs, 1), costs, 0);
  std::vector<std::string> results(costs.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t n = next++; n < order.size(); n = next++) results[order[n]] = runItem(work, order[n]);
  };
  std::vector<std::thread> pool;
  const auto extra = std::min<std::size_t>(std::max(threads, 1u), std::max<std::size_t>(order.size(), 1)) - 1;
  for (std::size_t t = 0; t < extra; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  return results;
}

std::ostream& nullStream() {
  class NullBuffer : public std::streambuf {
   protected:
    int overflow(int c) override { return c == traits_type::eof() ? 0 : c; }
    std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
  };
  static NullBuffer buffer;
  static std::ostream stream(&buffer);
  return stream;
}

void addMpiObject(nlohmann::json& report) {
  if (auto m = workPool().mpiJson()) report["mpi"] = std::move(*m);
}

void printMpiSummary(std::ostream& err) {
  const auto m = workPool().mpiJson();
  if (!m) return;
  std::string per;
  for (const auto& p : (*m)["per_process"])
    per += fmt::format("{}{} in {:.2f} s", per.empty() ? "" : ", ", p["items"].get<std::uint64_t>(),
                       p["seconds"].get<double>());
  err << fmt::format("reservoir: {} processes; items per process: {}\n", (*m)["processes"].get<int>(), per);
}

int worstExitCode(int a, int b) { return std::max(a, b); }

WorkPool& workPool() {
  static WorkPool local;
  return g_installed ? *g_installed : local;
}

void installWorkPool(WorkPool* pool) { g_installed = pool; }

std::vector<int> assignItems(const std::vector<std::uint64_t>& costs, int processes) {
  const int n = std::max(processes, 1);
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  std::vector<std::uint64_t> load(static_cast<std::size_t>(n), 0);
  std::vector<std::size_t> count(static_cast<std::size_t>(n), 0);
  std::vector<int> owner(costs.size(), 0);
  for (std::size_t i : order) {
    // The least loaded process; among equals the one with fewest items, then the lowest rank
    // (so that items of cost 0 still spread over every process).
    int best = 0;
    for (int p = 1; p < n; ++p) {
      const auto up = static_cast<std::size_t>(p), ub = static_cast<std::size_t>(best);
      if (load[up] < load[ub] || (load[up] == load[ub] && count[up] < count[ub])) best = p;
    }
    owner[i] = best;
    load[static_cast<std::size_t>(best)] += costs[i];
    ++count[static_cast<std::size_t>(best)];
  }
  return owner;
}

std::vector<std::size_t> itemsOf(const std::vector<int>& assignment, const std::vector<std::uint64_t>& costs,
                                 int rank) {
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < assignment.size(); ++i)
    if (assignment[i] == rank) mine.push_back(i);
  std::stable_sort(mine.begin(), mine.end(), [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  return mine;
}

static Expected<std::vector<std::string>> snapshotsOf(const std::string& dir, std::optional<std::int64_t> iteration) {
  auto ranked = traces::snapshotsInFolder(dir, iteration);
  if (!ranked) return iteration && ranked.status().isUsage() ? ranked.status().prefixed("--iteration: ") : ranked.status();
  std::vector<std::string> paths;
  for (auto& r : *ranked) paths.push_back(std::move(r.path));
  return paths;
}

Expected<std::vector<std::string>> expandTraceList(const std::vector<std::string>& args,
                                                   std::optional<std::int64_t> iteration) {
  std::vector<std::string> out;
  bool folder = false;
  for (const auto& a : args) {
    Expected<std::vector<std::string>> more = std::vector<std::string>{a};
    if (traces::isFolder(a)) {
      folder = true;
      more = snapshotsOf(a, iteration);
    } else if (a.size() > 1 && a[0] == '@')
      more = readList(a.substr(1));
    else if (isGlob(a) && !std::filesystem::exists(a))
      more = expandGlob(a);
    if (!more) return more.status();
    out.insert(out.end(), more->begin(), more->end());
  }
  if (iteration && !folder)
    return Status::usage(fmt::format("--iteration {}: it chooses among a dump folder's iterations, and no folder is given",
                                     *iteration));
  // An empty list is no trace at all, as if none were given: a gate given one must not pass.
  if (out.empty()) return Status::usage("no traces to read: the lists given name none");
  return out;
}

std::vector<std::uint64_t> fileSizes(const std::vector<std::string>& paths) {
  std::vector<std::uint64_t> sizes;
  for (const auto& p : paths) {
    std::error_code ec;
    const auto n = std::filesystem::file_size(p, ec);
    sizes.push_back(ec ? 0 : static_cast<std::uint64_t>(n));
  }
  return sizes;
}

}  // namespace reservoir::cli
