// Where a command's work items run: all in this process (WorkPool itself), or spread over the
// processes of an MPI job (replay/mpi's MpiPool, installed by main() when launched by mpirun or
// srun). The CLI speaks no MPI: a command lists its items (one per trace, or per trace and slice
// of candidates), says what each costs, and gets every item's result back as bytes on the root
// process, which renders them with the same code whatever ran them.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "reservoir/core/status.h"

namespace reservoir::cli {

class WorkPool {
 public:
  virtual ~WorkPool() = default;
  [[nodiscard]] virtual int processes() const { return 1; }
  [[nodiscard]] virtual int rank() const { return 0; }
  [[nodiscard]] bool root() const { return rank() == 0; }

  // Runs work(i) for every item i (each on one process, the largest first) and returns, on the
  // root, every item's result in item order; elsewhere an empty vector. `threads` items at once
  // in this process when there is only one (an MPI job runs one item at a time per process).
  // A result is a JSON text; an item that throws becomes itemError("internal error: ...").
  virtual std::vector<std::string> run(const std::vector<std::uint64_t>& costs,
                                       const std::function<std::string(std::size_t)>& work, unsigned threads,
                                       std::ostream& err);

  // The `mpi` object of --json output ({processes, per_process: [{items, seconds, cpu_seconds}]}), only in an
  // MPI job; nullopt otherwise.
  [[nodiscard]] virtual std::optional<nlohmann::json> mpiJson() const { return std::nullopt; }
};

// The result of an item that failed: {"error": message}, with "usage": true for a usage error
// (a point or selector that matches nothing in this trace).
std::string itemError(const std::string& message);
std::string itemError(const Status& status, const std::string& prefix = "");
// On the root: prints an item's error and returns its exit code (kUsage or kInputError).
int failItem(std::ostream& err, const nlohmann::json& result);
// Runs work(i), turning an exception into itemError (a pool never lets one escape an item).
std::string runItem(const std::function<std::string(std::size_t)>& work, std::size_t i);

// A stream that drops what is written (progress of items that run among others).
std::ostream& nullStream();
// Adds the pool's `mpi` object to a --json report (nothing outside an MPI job).
void addMpiObject(nlohmann::json& report);
// The items a run gave each process and its seconds, one line on `err` (nothing outside MPI).
void printMpiSummary(std::ostream& err);
// The worst of the items' exit codes (internal error > input error > "no" > ok).
int worstExitCode(int a, int b);

// The pool commands use: a local one unless main() installed another.
WorkPool& workPool();
void installWorkPool(WorkPool* pool);  // nullptr: back to the local one

// Which process runs each item: the largest first, each to the process with the least work so
// far (ties to the lowest rank). The same answer on every process, with no messages.
std::vector<int> assignItems(const std::vector<std::uint64_t>& costs, int processes);
// The items process `rank` runs, largest first.
std::vector<std::size_t> itemsOf(const std::vector<int>& assignment, const std::vector<std::uint64_t>& costs, int rank);

// The traces named on a command line: a path, "@list.txt" (one path a line; blank lines and
// lines starting with # are skipped; relative paths are relative to the list's folder), or a
// glob ("runs/*.pickle", sorted). A path that does not exist stays in the list (its item
// reports it); a glob that matches nothing is an error naming it, as is an unreadable list, and
// lists that name no trace at all are a usage error. A folder is the list of its snapshots, one per
// rank (traces::snapshotsInFolder: a torchtitan dump folder's newest iteration, or `iteration`;
// oom_rankN.pickle; plain *.pickle); `iteration` without a folder is a usage error.
Expected<std::vector<std::string>> expandTraceList(const std::vector<std::string>& args,
                                                   std::optional<std::int64_t> iteration = std::nullopt);
// Each file's size in bytes (0 when it cannot be read): what an item costs.
std::vector<std::uint64_t> fileSizes(const std::vector<std::string>& paths);

}  // namespace reservoir::cli
