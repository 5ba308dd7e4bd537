// A dump folder as the list of its snapshots, one per rank (issue 32): the one rule by which
// every front end (the CLI's commands, the Python package, the GUI) turns a folder into inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reservoir/core/status.h"

namespace reservoir::traces {

// One snapshot of a folder: its path, and its rank when the file's name gives one.
struct RankedSnapshot {
  std::string path;
  std::optional<std::int64_t> rank;
};

// The rank a snapshot's file name gives: rankR_memory_snapshot.pickle (torchtitan),
// oom_rankN.pickle (verl, lmms-engine), X.rankN.pickle (reservoir capture): "rank" then digits,
// as a word of the name (after its start, '_', '.' or '-', before a non-digit). None otherwise.
std::optional<std::int64_t> rankInFileName(std::string_view path);

// Whether `path` names a folder (following links).
bool isFolder(const std::string& path);

// The snapshots of folder `dir`, ordered by rank number (those without one after, by name):
//  - torchtitan's layout, given as the dump folder that holds memory_snapshot/, as
//    memory_snapshot/ itself, or as one iteration_N[_exit]/ folder: the rank files of the
//    newest iteration (the highest N; at the same N the _exit dump, written after), or of
//    iteration `iteration` (iteration_N, else iteration_N_exit);
//  - else the snapshot files in it (*.pickle, *.pickle.gz, *.pickle.zst, *.pkl): oom_rankN.pickle
//    (verl, lmms-engine), Megatron's --memory-snapshot-path, plain *.pickle.
// Errors (plain words, naming the folder): not a folder or unreadable, no snapshots in it, an
// iteration that is not there (saying which are), an iteration asked of a folder that has none,
// two files of one rank.
Expected<std::vector<RankedSnapshot>> snapshotsInFolder(const std::string& dir,
                                                        std::optional<std::int64_t> iteration = std::nullopt);

}  // namespace reservoir::traces
