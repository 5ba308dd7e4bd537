// A trace's program with what-if edits applied, flattened into the linear list of operations
// a replay backend executes (the model on the CPU, the real allocator through LibTorch, the
// driver through CUDA): the recorded mallocs, frees and empty_cache calls with the edits'
// items inserted where the what-if runner applies them (same gaps, same order: releases,
// cleanups, peak resets, probes and demands per gap).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reservoir/replay/whatif.h"

namespace reservoir::replay {

enum class BackendOpKind : std::uint8_t {
  kMalloc,      // torch.empty(size) on `stream` (into `pool` when set)
  kFree,        // the tensor dies; `deferred`: it was used on another stream (record_stream)
  kEmptyCache,  // torch.cuda.empty_cache(): recorded (`op` set) or a --cleanup (`edit` set)
  kProbe,       // --probe: report the allocator's figures here
  kResetPeaks,  // --reset-peaks / torch.cuda.reset_peak_memory_stats()
  kDemand,      // --demand: another process asks for `size` bytes here
};

std::string_view backendOpName(BackendOpKind kind);

inline constexpr std::uint32_t kNoAllocation = ~std::uint32_t{0};

struct BackendOp {
  BackendOpKind kind = BackendOpKind::kMalloc;
  std::uint32_t op = kNoOp;             // the program op it executes; kNoOp for an edit's item
  std::uint32_t alloc = kNoAllocation;  // malloc / free: the allocation (AllocationId value)
  sim::ByteCount size = 0;              // malloc: requested bytes; demand: bytes asked for
  sim::StreamId stream = 0;             // malloc: the allocation stream
  bool deferred = false;                // free: record_stream'd, its completion comes later
  bool recorded_oom = false;            // malloc: failed in the recording
  std::uint32_t completes_at = kNoOp;   // deferred free: the program op at whose start the GPU work is done
  std::optional<traces::PoolId> pool;   // malloc routed to a private pool; empty_cache: the pool released before it
  bool pool_only = false;               // empty_cache: of `pool` alone (OpRoute::pool_only)
  std::optional<sim::Addr> restore_at;  // malloc: a checkpoint restore's block (Op::restore_at)
  std::int32_t edit = -1;               // an edit's item: index into EditedProgram::edits
  std::uint32_t boundary = 0;           // an edit's item: the event boundary it sits at
};

struct EditedProgram {
  std::vector<BackendOp> ops;
  std::vector<std::string> edits;               // the edit texts, as given
  std::vector<sim::StreamId> streams;           // the recorded allocation streams, ascending (0 first when used)
  std::vector<sim::SeedSegment> seed;           // state before the trace's first event (ring-buffer traces)
  std::vector<std::uint32_t> seed_allocations;  // per seeded block, in order (kNoAllocation: none)
  std::vector<traces::PoolId> private_pools;
  std::size_t program_ops = 0;  // ops of the unedited program
  std::size_t mallocs = 0, frees = 0, deferred_frees = 0, empty_caches = 0, cleanups = 0;

  // Requests a backend serves: mallocs, frees and empty_cache calls.
  [[nodiscard]] std::size_t requests() const { return mallocs + frees + empty_caches + cleanups; }
  // The same requests from an empty allocator (a ring-buffer trace's window without the start
  // state rebuilt for it, which a real allocator cannot be given): frees of allocations made
  // before the window are dropped.
  [[nodiscard]] EditedProgram withoutSeed() const;
};

// Flattens `prepared`'s program with `edits` (resolved against it). A release becomes one
// (immediate) free per allocation live there whose stack matches, in allocation order; the
// program's own later free of such an allocation is then skipped by the executor, as the
// what-if runner does.
EditedProgram flattenProgram(const PreparedTrace& prepared, const std::vector<ResolvedEdit>& edits);

}  // namespace reservoir::replay
